#!/usr/bin/env bash
# Builds Bluejay for aarch64-unknown-linux-gnu with Debian 13's Swift (swiftlang 6.0.3),
# cross-compiling: the amd64 compiler of the Debian 13 root (Fixtures/debian13/root.sh)
# against the arm64 root (Fixtures/arm64/root.sh), through a Swift SDK (sdk.sh). What is
# built and where it lands: build-inside.sh, which runs in that root.
#
# As Fixtures/debian13/build.sh does for `make swift60`, through the same chroot
# (Fixtures/debian13/chroot.sh: the source read-only at /src, the package mirrors at
# /opt/swift-packages), it builds a copy of the source (rsync: unchanged files keep their
# times, the build stays incremental) in WORK (.build/arm64, at /build), which also holds the
# arm64 root (/build/root). Its HOME is WORK/home, so SwiftPM's caches stay apart from
# swift60's.
#
#   Fixtures/arm64/build.sh [AMD64_ROOT]      needs root (chroot, mount)
#
# SWIFT_LOG_REPO=DIR: as for swift60 (Fixtures/debian13/swift-log-60.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

AMD64_ROOT=${1:-.build/debian13-amd64/root}
WORK=${WORK:-.build/arm64}

if [ ! -f "$AMD64_ROOT/.bluejay-root" ]; then
    echo "arm64: no finished Debian 13 root at $AMD64_ROOT; run Fixtures/debian13/root.sh first" >&2
    exit 1
fi
if [ ! -f "$WORK/root/.bluejay-root" ]; then
    echo "arm64: no finished arm64 root at $WORK/root; run Fixtures/arm64/root.sh first" >&2
    exit 1
fi
Fixtures/debian13/chroot.sh "$AMD64_ROOT" "$WORK" /build/home /src/Fixtures/arm64/build-inside.sh \
    JOBS="${JOBS:-}" PARTS="${PARTS:-}"
