#!/bin/bash
# The part of Fixtures/arm64/build.sh that runs inside the Debian 13 (amd64) root: /src is
# the source (read-only), /build the work folder (.build/arm64 on the host), /build/root the
# arm64 root. Builds, in one scratch folder (/build/scratch; SwiftPM keeps each triple and
# configuration apart in it):
# - bluejay, bluejay-gateway and bluejay-bench for aarch64, release, the Swift runtime linked statically
#   (--static-swift-stdlib): what a board without Swift runs. The first two are copied to
#   /build (.build/arm64/bluejay, .build/arm64/bluejay-gateway: other scripts read these paths);
# - bluejay-bench for x86_64 too, built the same way by the same compiler, so that the
#   bench's aarch64/x86 ratio compares architectures (under emulation), not compilers or flags;
# - the test bundle for aarch64 (debug, the runtime linked dynamically: Swift Testing has no
#   static library in 6.0), run under qemu by Fixtures/arm64/check.py.
# Each step's seconds go to /build/times (STEP SECONDS), for check.py's table.
# PARTS="binaries bench tests" picks steps (default all).
set -euo pipefail
swift --version 2>&1 | head -1
PARTS=${PARTS:-binaries bench tests}
TRIPLE=aarch64-unknown-linux-gnu
: > /build/times.new
: > /build/build.log
step() {
    echo "== arm64: $1 in $2 s"
    echo "$3 $2" >> /build/times.new
}
wants() { [[ " $PARTS " == *" $1 "* ]]; }

started=$SECONDS
rsync -a --delete --exclude=/.build --exclude=/.venv --exclude=/.git --exclude=/artifacts --exclude=/.swiftpm \
    --exclude=/Package.resolved --exclude=.build/ --exclude=Package.resolved /src/ /build/src/
step "copied the source" $((SECONDS - started)) copy

/src/Fixtures/debian13/swift-log-60.sh /build/packages /build/gitconfig \
    /build/src/Package.resolved /build/scratch/repositories/swift-log-* /build/scratch/checkouts/swift-log
export GIT_CONFIG_GLOBAL=/build/gitconfig
/src/Fixtures/arm64/sdk.sh /build/sdks /build/root

# SwiftPM's own pkg-config reads the arm64 root's .pc files first (OpenSSL for the
# gateway's COpenSSL), with their paths under the root; clang and lld get the root as
# --sysroot from the SDK.
export PKG_CONFIG_PATH=/build/root/usr/lib/aarch64-linux-gnu/pkgconfig:/build/root/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=/build/root
cross=(--swift-sdks-path /build/sdks --swift-sdk bluejay-debian13-aarch64)
common=(--package-path /build/src --scratch-path /build/scratch ${JOBS:+--jobs $JOBS})
# Stripped by lld as it links (the toolchain's strip is the host's binutils and knows no
# aarch64): what is copied to a board, its size the one to report.
release=("${common[@]}" -c release --static-swift-stdlib -Xlinker --strip-all)
# SwiftPM does not link again when only the linker's options change: other options than
# last time take the release executables away.
echo "${release[*]}" > /build/scratch.flags.new
if ! cmp -s /build/scratch.flags.new /build/scratch/release.flags; then
    rm -f /build/scratch/*/release/{bluejay,bluejay-gateway,bluejay-bench}
fi

if wants binaries; then
    started=$SECONDS
    for product in bluejay bluejay-gateway; do
        swift build "${release[@]}" "${cross[@]}" --product $product 2>&1 | tee -a /build/build.log
        cp "/build/scratch/$TRIPLE/release/$product" "/build/$product.new" && mv "/build/$product.new" "/build/$product"
    done
    step "built bluejay and bluejay-gateway for $TRIPLE (release, static Swift runtime)" $((SECONDS - started)) binaries
fi

# The bench for aarch64 is built as the binaries are (one build of what they share). For
# x86_64, the same flags; only, Debian's swiftlang does not bring libstdc++'s development
# link (libstdc++.so, of libstdc++-14-dev) that the static runtime's link asks for (the arm64
# root has it): a folder of its own gives the linker that link to the root's libstdc++.so.6,
# as libstdc++-14-dev would. Both then need libstdc++.so.6 at run time, as the binaries do.
mkdir -p /build/x86_64-link
ln -sf /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /build/x86_64-link/libstdc++.so
if wants bench; then
    started=$SECONDS
    swift build "${release[@]}" "${cross[@]}" --product bluejay-bench 2>&1 | tee -a /build/build.log
    mkdir -p /build/bench
    cp "/build/scratch/$TRIPLE/release/bluejay-bench" /build/bench/bluejay-bench-aarch64
    step "built bluejay-bench for $TRIPLE" $((SECONDS - started)) bench-aarch64
    started=$SECONDS
    # lld as on the aarch64 side (the toolchain's default linker also warns about glibc's mktemp).
    x86=("${release[@]}" -Xswiftc -use-ld=lld -Xlinker -L/build/x86_64-link)
    (unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR; swift build "${x86[@]}" --product bluejay-bench) 2>&1 | tee -a /build/build.log
    cp "$(swift build "${x86[@]}" --show-bin-path)/bluejay-bench" /build/bench/bluejay-bench-x86_64
    step "built bluejay-bench for x86_64 (the ratio's other side)" $((SECONDS - started)) bench-x86_64
fi

if wants tests; then
    started=$SECONDS
    swift build "${common[@]}" "${cross[@]}" --build-tests 2>&1 | tee -a /build/build.log
    step "built the test bundle for $TRIPLE (debug)" $((SECONDS - started)) tests
fi

mkdir -p /build/scratch && mv /build/scratch.flags.new /build/scratch/release.flags
mv /build/times.new /build/times
warnings=$(grep -E '^/build/src/.*: warning:' /build/build.log | sort -u | wc -l || true)
echo "== arm64: $warnings warnings in the package's own code (Swift 6.0.3, $TRIPLE)"
grep -E '^/build/src/.*: warning:' /build/build.log | sort -u || true
