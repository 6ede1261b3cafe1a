#!/usr/bin/env bash
# make consumer: the example apps (Examples/) depend on Bluejay for Linux *by version*, as
# an app outside this repository does, and build and run against the Bumble peer:
#   Fixtures/consumer/check.sh SWIFT PYTHON [EXAMPLE...]
# The committed HEAD is cloned into a temporary folder and tagged 1.0.0. Each example's own
# manifest is copied with its one path dependency (`path: "../.."`) turned into
# `.package(url: "file://…", from: "1.0.0")`, then built (one scratch folder for all, so the
# package is compiled once) and run as `make examples` runs them. SwiftPM refuses a
# dependency pinned by version that has unsafe flags, so this fails if Package.swift gives
# any to an app's build. CI runs this in place of `make examples`: the same apps and runs,
# with the dependency an app really has.
set -euo pipefail
swift=$1 python=$2; shift 2
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(HeartRateMonitor HeartRateAsync)
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone --quiet --no-local . "$work/bluejay"
git -C "$work/bluejay" tag -l | xargs -r git -C "$work/bluejay" tag -d > /dev/null
git -C "$work/bluejay" tag 1.0.0
echo "== consumer: depends on $(git -C "$work/bluejay" log -1 --format='%h %s' | cut -c1-72) as 1.0.0"

for example in "${examples[@]}"; do
    cp -R "Examples/$example" "$work/$example"
    rm -rf "$work/$example/.build" "$work/$example/Package.resolved"
    manifest=$work/$example/Package.swift
    # The examples name the package "Bluejay" by path; by URL its identity is the last path
    # component, so the clone's folder is called bluejay and the product's package matches.
    sed -i "s|\.package(name: \"Bluejay\", path: \"\.\./\.\.\")|.package(url: \"file://$work/bluejay\", from: \"1.0.0\")|" "$manifest"
    grep -q "from: \"1.0.0\"" "$manifest" \
        || { echo "consumer: Examples/$example/Package.swift has no .package(name: \"Bluejay\", path: \"../..\") to pin by version" >&2; exit 1; }
    echo "== consumer: building $example"
    "$swift" build --package-path "$work/$example" --scratch-path .build/consumer
done
Examples/run.sh "$python" .build/consumer/debug "${examples[@]}"
