#!/bin/bash
# The part of Fixtures/debian13/build.sh that runs inside the Debian 13 root: /src is the
# source (read-only), /build the work folder (.build/swift60 on the host).
set -euo pipefail
swift --version 2>&1 | head -1

step() { echo "== swift60: $1 in $2 s"; }

started=$SECONDS
rsync -a --delete --exclude=/.build --exclude=/.venv --exclude=/.git --exclude=/artifacts --exclude=/.swiftpm \
    --exclude=/Package.resolved --exclude=.build/ --exclude=Package.resolved /src/ /build/src/
step "copied the source" $((SECONDS - started))

# swift-log for Swift 6.0 (Fixtures/debian13/swift-log-60.sh says why), and what SwiftPM
# remembered of another one, forgotten when it is made anew.
/src/Fixtures/debian13/swift-log-60.sh /build/packages /build/gitconfig \
    /build/src/Package.resolved /build/src/Examples/*/Package.resolved \
    /build/scratch/repositories/swift-log-* /build/scratch/checkouts/swift-log \
    /build/examples/repositories/swift-log-* /build/examples/checkouts/swift-log
export GIT_CONFIG_GLOBAL=/build/gitconfig

jobs=${JOBS:+--jobs $JOBS}
started=$SECONDS
if [ "${TESTS:-yes}" = yes ]; then
    swift build --package-path /build/src --scratch-path /build/scratch --build-tests $jobs 2>&1 | tee /build/build.log
    step "built every product and the test bundles" $((SECONDS - started))
else
    swift build --package-path /build/src --scratch-path /build/scratch $jobs 2>&1 | tee /build/build.log
    step "built every product" $((SECONDS - started))
fi

for example in $EXAMPLES; do
    started=$SECONDS
    swift build --package-path "/build/src/Examples/$example" --scratch-path /build/examples $jobs 2>&1 | tee -a /build/build.log
    step "built Examples/$example" $((SECONDS - started))
done

warnings=$(grep -E '^/build/src/.*: warning:' /build/build.log | sort -u | wc -l || true)
echo "== swift60: $warnings warnings in the package's own code (Swift 6.0.3)"
grep -E '^/build/src/.*: warning:' /build/build.log | sort -u || true
# Zero warnings, as with the main toolchain: a warning only 6.0 gives fails the build.
[ "$warnings" = 0 ] || { echo "swift60: FAILED: Swift 6.0.3 warns (above)"; exit 1; }
