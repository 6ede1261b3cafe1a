#!/usr/bin/env bash
# A Debian 13 ("trixie") root with Debian's own Swift (the `swiftlang` package, 6.0.3), for
# building the package with the oldest Swift it supports (Fixtures/debian13/build.sh,
# `make swift60`). Made by mmdebstrap from Debian's archive into a folder of its own
# (default .build/debian13-amd64/root); the host's apt sources are not touched.
#
# Idempotent: a finished root (its stamp names the same packages) is reused as it is; an
# unfinished one (an interrupted run) is made again from nothing. Needs root (mmdebstrap's
# root mode; a chroot build needs it anyway).
#
#   Fixtures/debian13/root.sh [ROOT]     ARCH=arm64 for an arm64 root (foreign: qemu-user)
set -euo pipefail
cd "$(dirname "$0")/../.."

ARCH=${ARCH:-amd64}
ROOT=${1:-.build/debian13-$ARCH/root}
# The codename, not `stable`: when Debian 14 becomes stable the root must stay Debian 13.
SUITE=${SUITE:-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# What a build of every product and test bundle needs: the compiler (swiftlang brings
# clang, the linker and the Swift runtime, Foundation, XCTest, Swift Testing), the BlueZ
# headers for the C shim, OpenSSL for the gateway's TLS (found by pkg-config), git for
# SwiftPM to fetch the dependencies, rsync for build.sh's copy of the source.
PACKAGES=${PACKAGES:-swiftlang libbluetooth-dev libssl-dev pkg-config git ca-certificates rsync}

STAMP="$ROOT/.bluejay-root"
want="suite=$SUITE arch=$ARCH packages=$PACKAGES"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    echo "debian13 root: $ROOT is ready ($(chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}' swiftlang))"
    exit 0
fi

if ! command -v mmdebstrap > /dev/null; then
    echo "debian13 root: installing mmdebstrap on the host"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap
fi
if [ "$ARCH" != "$(dpkg --print-architecture)" ] && ! command -v qemu-aarch64-static > /dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user-static binfmt-support
fi

started=$SECONDS
rm -rf "$ROOT.tmp" "$ROOT"
mkdir -p "$(dirname "$ROOT")"
# --variant=apt: Essential and apt, then PACKAGES with their dependencies (no recommends).
mmdebstrap --mode=root --variant=apt --arch="$ARCH" \
    --aptopt='APT::Install-Recommends "false"' \
    --include="${PACKAGES// /,}" \
    "$SUITE" "$ROOT.tmp" "$MIRROR"
# SwiftPM inside resolves https://github.com/OWNER/NAME from the local mirrors, as on the
# host (build.sh binds /opt/swift-packages into the root).
mkdir -p "$ROOT.tmp/opt/swift-packages" "$ROOT.tmp/src"
cat > "$ROOT.tmp/etc/gitconfig" <<'GIT'
[url "/opt/swift-packages/"]
	insteadOf = https://github.com/
	insteadOf = git@github.com:
	insteadOf = ssh://git@github.com/
[safe]
	directory = *
GIT
echo "$want" > "$ROOT.tmp/.bluejay-root"
mv "$ROOT.tmp" "$ROOT"
echo "debian13 root: $ROOT made in $((SECONDS - started)) s ($(chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}' swiftlang))"
