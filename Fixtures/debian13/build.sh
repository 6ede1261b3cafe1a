#!/usr/bin/env bash
# Builds every product and the test bundles with Debian 13's Swift (swiftlang 6.0.3), in
# the root that Fixtures/debian13/root.sh makes, then the example apps (Examples/): the
# oldest Swift the package supports (`make swift60`, a CI stage).
#
# The chroot (Fixtures/debian13/chroot.sh) sees the source read-only at /src and the local
# package mirrors read-only at /opt/swift-packages (root.sh wrote the insteadOf that reads
# them). It builds a copy of the source (rsync, so that unchanged files keep their times and
# the build stays incremental) under WORK, with its own Package.resolved and scratch folder:
# nothing it does writes to the source tree or to the host's .build.
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
mkdir -p "$WORK"
Fixtures/debian13/chroot.sh "$ROOT" "$WORK" /root /src/Fixtures/debian13/build-inside.sh \
    EXAMPLES="${EXAMPLES-HeartRateMonitor HeartRateAsync}" JOBS="${JOBS:-}" TESTS="${TESTS:-yes}"
