#!/bin/bash
# swift-log for Swift 6.0, made from the local mirror, and the git configuration that makes
# SwiftPM take it: shared by the builds with Debian 13's Swift (Fixtures/debian13/build-inside.sh,
# `make swift60`; Fixtures/arm64/build-inside.sh, `make arm64`). Runs inside the Debian 13 root.
#
#   swift-log-60.sh PACKAGES GITCONFIG [STALE...]
#
# PACKAGES: the folder for the made repository (PACKAGES/apple/swift-log.git); GITCONFIG: the
# file written for GIT_CONFIG_GLOBAL; STALE: what SwiftPM remembered of another swift-log
# (resolved files, scratch folders' clones and checkouts), removed when the repository is made
# anew.
#
# Why: every swift-log release from 1.12.0 on declares tools 6.2, and the local mirror holds
# 1.16.2 alone. On a machine that reaches GitHub, SwiftPM 6.0.3 skips the releases whose
# tools are too new and takes 1.11.0, the last with a manifest for 6.0 (the package's
# `from:` allows it). Offline, a swift-log for 6.0 is made here from the mirror's 1.16.2:
# a manifest for tools 6.0 (no traits: their default is none; none of the unsafe flags)
# and three mechanical rewrites of what Swift 6.0 cannot parse: nonisolated(nonsending)
# dropped (it marks only the task-local logger's withLogger functions, which Bluejay does
# not call; without it they run off the caller's actor), `_runtime(_multithreaded)` made
# `!os(WASI)` (true on Linux either way), trailing commas in argument lists removed. It is
# committed with fixed dates, so the same tree gets the same revision run after run.
# SWIFT_LOG_REPO=DIR (a clone with swift-log's release tags) takes the real releases instead,
# as a Debian 13 machine online would.
set -euo pipefail
PACKAGES=$1 GITCONFIG=$2
shift 2

LOG_REPO=$PACKAGES/apple/swift-log.git
if [ -n "${SWIFT_LOG_REPO:-}" ]; then
    made="clone of $SWIFT_LOG_REPO"
else
    made="1.16.2 for Swift 6.0"
fi
if [ "$(cat "$LOG_REPO/bluejay-made-from" 2>/dev/null)" != "$made" ]; then
    tmp=$PACKAGES/swift-log.tmp
    rm -rf "$LOG_REPO" "$tmp"
    mkdir -p "$PACKAGES/apple"
    if [ -n "${SWIFT_LOG_REPO:-}" ]; then
        git clone -q --bare "$SWIFT_LOG_REPO" "$LOG_REPO"
    else
        mkdir -p "$tmp"
        git --git-dir=/opt/swift-packages/apple/swift-log.git archive 1.16.2 | tar -x -C "$tmp"
        perl -0pi -e 's/nonisolated\(nonsending\) //g; s/_runtime\(_multithreaded\)/!os(WASI)/g; s/,(\s*\))/$1/g' \
            $(find "$tmp/Sources" -name '*.swift')
        cat > "$tmp/Package.swift" <<'MANIFEST'
// swift-tools-version:6.0
// swift-log 1.16.2's own manifest declares tools 6.2 (for traits); this one, made by
// Bluejay's Fixtures/debian13/swift-log-60.sh, builds the same sources with Swift 6.0.
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
            cd "$tmp"
            export GIT_AUTHOR_NAME=bluejay GIT_AUTHOR_EMAIL=bluejay@localhost GIT_COMMITTER_NAME=bluejay \
                GIT_COMMITTER_EMAIL=bluejay@localhost GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z'
            git init -q -b main . && git add -A && git commit -q -m "swift-log 1.16.2, for Swift 6.0"
            git tag 1.16.2
        )
        git clone -q --bare "$tmp" "$LOG_REPO"
        rm -rf "$tmp"
    fi
    echo "$made" > "$LOG_REPO/bluejay-made-from"
    # Another swift-log than last time: resolve again, and forget the revision SwiftPM
    # recorded for its version (its fingerprint check refuses a new one for 1.16.2).
    rm -rf "$@" "$HOME"/.swiftpm/security/fingerprints/swift-log-*.json "$HOME"/.cache/org.swift.swiftpm/repositories/swift-log-*
fi
echo "== swift-log from $made"
cat > "$GITCONFIG" <<GIT
[url "$PACKAGES/apple/swift-log"]
	insteadOf = https://github.com/apple/swift-log
GIT
