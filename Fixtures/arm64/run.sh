#!/usr/bin/env bash
# `make arm64`: bluejay for aarch64 with Debian 13's Swift, run under qemu-aarch64.
#
#   Fixtures/arm64/run.sh PEER_PYTHON X86_BLUEJAY      needs root (mmdebstrap, chroot, mount)
#
# 1. the Debian 13 amd64 root with swiftlang 6.0.3 (Fixtures/debian13/root.sh, swift60's);
# 2. the arm64 root: sysroot and qemu's root at once (Fixtures/arm64/root.sh);
# 3. the cross build in the amd64 root (Fixtures/arm64/build.sh): .build/arm64/bluejay and
#    .build/arm64/bluejay-gateway, bluejay-bench both ways, the aarch64 test bundle;
# 4. the checks and their table (Fixtures/arm64/check.py), against X86_BLUEJAY (the host's
#    build of the same commit) where they compare or need an x86 central.
# Every step is reused when done (stamped roots, SwiftPM's incremental build): a second run
# builds nothing. Each step's seconds go to .build/arm64/phases for the table; the Makefile
# adds the host's own build (HOST_BUILD_SECONDS).
set -euo pipefail
cd "$(dirname "$0")/../.."
PEER_PYTHON=$1 X86_BLUEJAY=$2
WORK=.build/arm64

mkdir -p "$WORK"
: > "$WORK/phases.new"
[ -z "${HOST_BUILD_SECONDS:-}" ] || echo "x86 bluejay, the host's own Swift (debug) $HOST_BUILD_SECONDS" >> "$WORK/phases.new"
phase() {
    local name=$1 started=$SECONDS
    shift
    "$@"
    echo "$name $((SECONDS - started))" >> "$WORK/phases.new"
}
phase "Debian 13 amd64 root (swiftlang)" Fixtures/debian13/root.sh
phase "arm64 root (sysroot, qemu's root)" Fixtures/arm64/root.sh
phase "cross build, all of it (details below)" Fixtures/arm64/build.sh
mv "$WORK/phases.new" "$WORK/phases"
"$PEER_PYTHON" Fixtures/arm64/check.py --python "$PEER_PYTHON" --x86 "$X86_BLUEJAY" --work "$WORK"
