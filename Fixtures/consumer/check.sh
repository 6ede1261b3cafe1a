#!/usr/bin/env bash
# make consumer: an app that depends on Bluejay for Linux *by version*, as an app outside
# this repository does, builds and runs against the Bumble peer:
#   Fixtures/consumer/check.sh SWIFT PYTHON
# The committed HEAD is cloned into a temporary folder and tagged 1.0.0; a package with
# `.package(url: "file://…", from: "1.0.0")` and the HeartRateAsync example's source (scan,
# connect, read, listen) is built and run. SwiftPM refuses a dependency pinned by version
# that has unsafe flags, so this fails if Package.swift gives any to an app's build.
set -euo pipefail
swift=$1 python=$2
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone --quiet --no-local . "$work/bluejay"
git -C "$work/bluejay" tag -l | xargs -r git -C "$work/bluejay" tag -d > /dev/null
git -C "$work/bluejay" tag 1.0.0
echo "== consumer: depends on $(git -C "$work/bluejay" log -1 --format='%h %s' | cut -c1-72) as 1.0.0"

app=$work/app
mkdir -p "$app/Sources/HeartRateAsync"
cp Examples/HeartRateAsync/Sources/HeartRateAsync/*.swift "$app/Sources/HeartRateAsync/"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "HeartRateAsync",
    dependencies: [.package(url: "file://$work/bluejay", from: "1.0.0")],
    targets: [
        .executableTarget(name: "HeartRateAsync", dependencies: [.product(name: "Bluejay", package: "bluejay")]),
    ]
)
MANIFEST

"$swift" build --package-path "$app" --scratch-path .build/consumer
Examples/run.sh "$python" .build/consumer/debug HeartRateAsync
