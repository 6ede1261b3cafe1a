#!/usr/bin/env bash
# Builds every product and the test bundles with Debian 13's Swift (swiftlang 6.0.3), in
# the root that Fixtures/debian13/root.sh makes, then the example apps (Examples/): the
# oldest Swift the package supports (`make swift60`, a CI stage).
#
# The chroot sees the source read-only at /src and the local package mirrors read-only at
# /opt/swift-packages (its git reads https://github.com/OWNER/NAME from there, as the host's
# does: root.sh wrote the same insteadOf). It builds a copy of the source (rsync, so that
# unchanged files keep their times and the build stays incremental) under WORK, with its
# own Package.resolved and scratch folder: nothing it does writes to the source tree or to
# the host's .build. Mounts live in a private mount namespace and go with it.
#
#   Fixtures/debian13/build.sh [ROOT]      needs root (chroot, mount)
#
# TESTS=no builds the products alone (CI's stage: the test bundles double the time, and
# `make test` builds them with the main toolchain); EXAMPLES="" leaves the examples out.
#
# SWIFT_LOG_REPO=DIR: swift-log's releases from a clone with their tags, instead of the
# 1.16.2 made for Swift 6.0 from the local mirror (swift-log-60.sh says why).
set -euo pipefail
cd "$(dirname "$0")/../.."

ROOT=${1:-.build/debian13-amd64/root}
# The copy of the source (src/), the scratch folders (scratch/, examples/) and the
# swift-log made for 6.0 (packages/, see swift-log-60.sh).
WORK=${WORK:-.build/swift60}

if [ ! -f "$ROOT/.bluejay-root" ]; then
    echo "swift60: no finished root at $ROOT; run Fixtures/debian13/root.sh first" >&2
    exit 1
fi
mkdir -p "$WORK" "$ROOT/build"
SRC=$PWD ROOT=$(realpath "$ROOT") WORK=$(realpath "$WORK") EXAMPLES=${EXAMPLES-HeartRateMonitor HeartRateAsync} TESTS=${TESTS:-yes} \
SWIFT_LOG_REPO=${SWIFT_LOG_REPO:+$(realpath "$SWIFT_LOG_REPO")} \
unshare --mount --propagation private bash -euo pipefail -c '
    mount -t proc proc "$ROOT/proc"
    mount --rbind /dev "$ROOT/dev"
    mount --bind "$SRC" "$ROOT/src" && mount -o remount,bind,ro "$ROOT/src"
    mount --bind /opt/swift-packages "$ROOT/opt/swift-packages" && mount -o remount,bind,ro "$ROOT/opt/swift-packages"
    mount --bind "$WORK" "$ROOT/build"
    if [ -n "$SWIFT_LOG_REPO" ]; then
        mkdir -p "$ROOT/swift-log-repo"
        mount --bind "$SWIFT_LOG_REPO" "$ROOT/swift-log-repo" && mount -o remount,bind,ro "$ROOT/swift-log-repo"
    fi
    exec chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=dumb \
        EXAMPLES="$EXAMPLES" JOBS="${JOBS:-}" TESTS="${TESTS:-yes}" SWIFT_LOG_REPO="${SWIFT_LOG_REPO:+/swift-log-repo}" /bin/bash /src/Fixtures/debian13/build-inside.sh
'
