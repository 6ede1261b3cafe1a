#!/usr/bin/env bash
# Runs SCRIPT (a path inside the root) in a Debian 13 root, as the builds with Debian's Swift
# need it (Fixtures/debian13/build.sh for `make swift60`, Fixtures/arm64/build.sh for
# `make arm64`): the source read-only at /src, the local package mirrors read-only at
# /opt/swift-packages (the root's git reads https://github.com/OWNER/NAME from there, as the
# host's does), WORK at /build, and with SWIFT_LOG_REPO=DIR that clone read-only at
# /swift-log-repo (swift-log-60.sh). Mounts live in a private mount namespace and go with it;
# the script starts with an empty environment but for HOME, PATH, LANG, TERM, SWIFT_LOG_REPO
# and the NAME=VALUE pairs given.
#
#   Fixtures/debian13/chroot.sh ROOT WORK HOME SCRIPT [NAME=VALUE ...]     needs root
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 4 ] || { echo "usage: $0 ROOT WORK HOME SCRIPT [NAME=VALUE ...]" >&2; exit 2; }
ROOT=$(realpath "$1") WORK=$(realpath "$2") CHROOT_HOME=$3 SCRIPT=$4
shift 4
mkdir -p "$ROOT/build"
SRC=$PWD ROOT=$ROOT WORK=$WORK SWIFT_LOG_REPO=${SWIFT_LOG_REPO:+$(realpath "$SWIFT_LOG_REPO")} \
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
    exec chroot "$ROOT" /usr/bin/env -i HOME="$0" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=dumb \
        SWIFT_LOG_REPO="${SWIFT_LOG_REPO:+/swift-log-repo}" "${@:2}" /bin/bash "$1"
' "$CHROOT_HOME" "$SCRIPT" "$@"
