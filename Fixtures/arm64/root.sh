#!/usr/bin/env bash
# The arm64 root of `make arm64` (default .build/arm64/root): Debian 13's arm64 files, for
# two uses at once. It is the sysroot that Debian's amd64 Swift cross-compiles against
# (headers, crt files, libc, libstdc++, libbluetooth and OpenSSL to link with, and
# the aarch64 half of Debian's Swift: the swiftmodules, the static runtime, swiftrt.o),
# and the root that qemu-aarch64 runs the binaries in (-L: the board's ld.so, libc and
# libssl3t64; the Swift runtime's shared libraries for the test bundles).
#
# mmdebstrap's extract variant: packages are unpacked, not installed, so nothing arm64 runs
# (no qemu, no maintainer scripts) and it takes seconds. Packages whose files are unpacked:
# - libc6-dev, libgcc-14-dev, libstdc++-14-dev: what clang and lld need to compile the C
#   shims and link (the static Swift runtime links libstdc++);
# - libbluetooth-dev (the user channel's C shim), libssl-dev (the gateway's TLS; its
#   libssl3t64 is what the gateway links dynamically, as on a board);
# - libswiftlang: Swift's runtime as shared libraries (/usr/libexec/swift/lib/swift/linux),
#   what the test bundles link (Swift Testing and XCTest have no static libraries in 6.0).
# From `swiftlang` (the compiler package, 400 MB: clang, lld, lldb for arm64) only the
# aarch64 parts a cross build needs are taken out of the .deb: usr/libexec/swift/lib/swift
# (the swiftmodules, swiftrt.o, the shims), .../swift_static (the static runtime for
# --static-swift-stdlib) and .../clang (clang's own headers, which both resource folders
# link to, and its aarch64 runtime objects). The compiler that runs is the amd64 one of the Debian 13 root.
#
# Idempotent: a finished root whose stamp names the same suite and packages is reused; an
# unfinished one is made again from nothing. Needs root (mmdebstrap's root mode).
#
#   Fixtures/arm64/root.sh [ROOT]
set -euo pipefail
cd "$(dirname "$0")/../.."

ROOT=${1:-.build/arm64/root}
SUITE=${SUITE:-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES=${PACKAGES:-libc6-dev libgcc-14-dev libstdc++-14-dev libbluetooth-dev libssl-dev libswiftlang}
# The parts of swiftlang's .deb taken (tar member names).
SWIFTLANG_PARTS="./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/swift_static ./usr/lib/swift ./usr/libexec/swift/lib/clang"

STAMP="$ROOT/.bluejay-root"
want="suite=$SUITE arch=arm64 packages=$PACKAGES swiftlang=$SWIFTLANG_PARTS"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    echo "arm64 root: $ROOT is ready ($(sed -n 's/^swiftlang //p' "$ROOT/.bluejay-versions"))"
    exit 0
fi

missing=""
command -v mmdebstrap > /dev/null || missing="$missing mmdebstrap"
command -v qemu-aarch64-static > /dev/null || missing="$missing qemu-user-static"
command -v file > /dev/null || missing="$missing file"
if [ -n "$missing" ]; then
    echo "arm64 root: installing on the host:$missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

started=$SECONDS
rm -rf "$ROOT.tmp" "$ROOT"
mkdir -p "$(dirname "$ROOT")"
# The extract hook (the extract variant runs no customize hooks) runs on the host with
# the root's own apt configuration (arm64, trixie): it downloads swiftlang's .deb (the same
# version as libswiftlang: swiftlang depends on exactly it), takes its aarch64 parts out,
# and records the version. The .deb goes with the hook's temporary folder.
mmdebstrap --mode=root --variant=extract --arch=arm64 \
    --aptopt='APT::Install-Recommends "false"' \
    --include="${PACKAGES// /,}" \
    --extract-hook='set -e; tmp=$(mktemp -d); cd "$tmp"
        APT_CONFIG="$MMDEBSTRAP_APT_CONFIG" apt-get download -q swiftlang:arm64
        dpkg-deb --fsys-tarfile swiftlang_*.deb | tar -x -C "$1" '"$SWIFTLANG_PARTS"'
        echo "swiftlang $(dpkg-deb -f swiftlang_*.deb Version)" > "$1/.bluejay-versions"
        cd /; rm -rf "$tmp"' \
    "$SUITE" "$ROOT.tmp" "$MIRROR"
for need in usr/libexec/swift/lib/swift_static/linux/libswiftCore.a usr/libexec/swift/lib/swift/linux/aarch64/swiftrt.o \
    usr/libexec/swift/lib/swift/linux/libswiftCore.so .bluejay-versions; do
    [ -e "$ROOT.tmp/$need" ] || { echo "arm64 root: $need is missing after mmdebstrap" >&2; exit 1; }
done
# Debian 13 is merged-/usr, but in the extract variant no package makes the links: the
# program interpreter is /lib/ld-linux-aarch64.so.1, and libc.so names /lib/... paths.
for dir in bin lib sbin; do
    [ -e "$ROOT.tmp/$dir" ] || ln -s "usr/$dir" "$ROOT.tmp/$dir"
done
echo "$want" > "$ROOT.tmp/.bluejay-root"
mv "$ROOT.tmp" "$ROOT"
echo "arm64 root: $ROOT made in $((SECONDS - started)) s ($(sed -n 's/^swiftlang //p' "$ROOT/.bluejay-versions"))"
