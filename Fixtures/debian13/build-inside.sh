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

# swift-log: every release from 1.12.0 on declares tools 6.2, and the local mirror holds
# 1.16.2 alone. On a machine that reaches GitHub, SwiftPM 6.0.3 skips the releases whose
# tools are too new and takes 1.11.0, the last with a manifest for 6.0 (the package's
# `from:` allows it). Offline, a swift-log for 6.0 is made here from the mirror's 1.16.2:
# a manifest for tools 6.0 (no traits: their default is none; none of the unsafe flags)
# and three mechanical rewrites of what Swift 6.0 cannot parse: nonisolated(nonsending)
# dropped (it marks only the task-local logger's withLogger functions, which Bluejay does
# not call; without it they run off the caller's actor), `_runtime(_multithreaded)` made
# `!os(WASI)` (true on Linux either way), trailing commas in argument lists removed. It is
# committed with fixed dates, so the same tree gets the same revision run after run. SWIFT_LOG_REPO=DIR (a clone with swift-log's
# release tags) takes the real releases instead, as a Debian 13 machine online would.
LOG_REPO=/build/packages/apple/swift-log.git
if [ -n "${SWIFT_LOG_REPO:-}" ]; then
    made="clone of $SWIFT_LOG_REPO"
else
    made="1.16.2 for Swift 6.0"
fi
if [ "$(cat "$LOG_REPO/bluejay-made-from" 2>/dev/null)" != "$made" ]; then
    rm -rf "$LOG_REPO" /build/packages/swift-log.tmp
    mkdir -p /build/packages/apple
    if [ -n "${SWIFT_LOG_REPO:-}" ]; then
        git clone -q --bare "$SWIFT_LOG_REPO" "$LOG_REPO"
    else
        mkdir -p /build/packages/swift-log.tmp
        git --git-dir=/opt/swift-packages/apple/swift-log.git archive 1.16.2 | tar -x -C /build/packages/swift-log.tmp
        perl -0pi -e 's/nonisolated\(nonsending\) //g; s/_runtime\(_multithreaded\)/!os(WASI)/g; s/,(\s*\))/$1/g' \
            $(find /build/packages/swift-log.tmp/Sources -name '*.swift')
        cat > /build/packages/swift-log.tmp/Package.swift <<'MANIFEST'
// swift-tools-version:6.0
// swift-log 1.16.2's own manifest declares tools 6.2 (for traits); this one, made by
// Bluejay's Fixtures/debian13/build-inside.sh, builds the same sources with Swift 6.0.
import PackageDescription

let package = Package(
    name: "swift-log",
    products: [
        .library(name: "Logging", targets: ["Logging"]),
        .library(name: "InMemoryLogging", targets: ["InMemoryLogging"]),
    ],
    targets: [
        .target(name: "Logging", dependencies: [], exclude: ["CMakeLists.txt"]),
        .target(name: "InMemoryLogging", dependencies: ["Logging"], exclude: ["CMakeLists.txt"]),
    ]
)
MANIFEST
        (
            cd /build/packages/swift-log.tmp
            export GIT_AUTHOR_NAME=bluejay GIT_AUTHOR_EMAIL=bluejay@localhost GIT_COMMITTER_NAME=bluejay \
                GIT_COMMITTER_EMAIL=bluejay@localhost GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z'
            git init -q -b main . && git add -A && git commit -q -m "swift-log 1.16.2, for Swift 6.0"
            git tag 1.16.2
        )
        git clone -q --bare /build/packages/swift-log.tmp "$LOG_REPO"
        rm -rf /build/packages/swift-log.tmp
    fi
    echo "$made" > "$LOG_REPO/bluejay-made-from"
    # Another swift-log than last time: resolve again, and forget the revision SwiftPM
    # recorded for its version (its fingerprint check refuses a new one for 1.16.2).
    rm -f /build/src/Package.resolved /build/src/Examples/*/Package.resolved /root/.swiftpm/security/fingerprints/swift-log-*.json
    rm -rf /root/.cache/org.swift.swiftpm/repositories/swift-log-* /build/scratch/repositories/swift-log-* \
        /build/scratch/checkouts/swift-log /build/examples/repositories/swift-log-* /build/examples/checkouts/swift-log
fi
echo "== swift60: swift-log from $made"
cat > /build/gitconfig <<'GIT'
[url "/build/packages/apple/swift-log"]
	insteadOf = https://github.com/apple/swift-log
GIT
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
