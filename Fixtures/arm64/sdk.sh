#!/bin/bash
# The Swift SDK that makes Debian 13's amd64 Swift build for aarch64-unknown-linux-gnu
# (`make arm64`): an artifact bundle of SwiftPM's (swift-sdk.json, schema 4.0, and a
# toolset), taken with `swift build --swift-sdks-path DIR --swift-sdk bluejay-debian13-aarch64`.
# Runs inside the Debian 13 root (Fixtures/arm64/build-inside.sh).
#
#   sdk.sh DIR ROOT      DIR: where the bundle goes; ROOT: the arm64 root (Fixtures/arm64/root.sh)
#
# The arm64 root is the sysroot (headers, crt files, the libraries to link). Swift's
# resources for aarch64 are the root's own, from Debian's arm64 swiftlang: the swiftmodules
# and swiftrt.o under lib/swift, the static runtime under lib/swift_static (taken by
# --static-swift-stdlib). The compiler, clang and lld are the amd64 toolchain's.
# lld links: the toolchain's default, gold, is the host's binutils and knows no aarch64.
set -euo pipefail
DIR=$1 ROOT=$2
NAME=bluejay-debian13-aarch64
TRIPLE=aarch64-unknown-linux-gnu
BUNDLE=$DIR/$NAME.artifactbundle
VERSION=$(sed -n 's/^swiftlang //p' "$ROOT/.bluejay-versions")

mkdir -p "$BUNDLE/$NAME"
cat > "$BUNDLE/info.json.new" <<JSON
{
  "schemaVersion": "1.0",
  "artifacts": {
    "$NAME": {"type": "swiftSDK", "version": "$VERSION", "variants": [{"path": "$NAME"}]}
  }
}
JSON
cat > "$BUNDLE/$NAME/swift-sdk.json.new" <<JSON
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "$TRIPLE": {
      "sdkRootPath": "$ROOT",
      "swiftResourcesPath": "$ROOT/usr/libexec/swift/lib/swift",
      "swiftStaticResourcesPath": "$ROOT/usr/libexec/swift/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
JSON
cat > "$BUNDLE/$NAME/toolset.json.new" <<JSON
{"schemaVersion": "1.0", "swiftCompiler": {"extraCLIOptions": ["-use-ld=lld"]}}
JSON
# The driver reads the SDK's SDKSettings.json (a Darwin SDK's description) and warns on
# every compile when there is none; two keys are all it needs.
cat > "$BUNDLE/SDKSettings.json.new" <<JSON
{"CanonicalName": "debian13-aarch64", "Version": "13.0"}
JSON
if cmp -s "$BUNDLE/SDKSettings.json.new" "$ROOT/SDKSettings.json"; then rm "$BUNDLE/SDKSettings.json.new"; else mv "$BUNDLE/SDKSettings.json.new" "$ROOT/SDKSettings.json"; fi
# Written only when changed, so that SwiftPM's build stays incremental.
for file in info.json $NAME/swift-sdk.json $NAME/toolset.json; do
    if cmp -s "$BUNDLE/$file.new" "$BUNDLE/$file"; then rm "$BUNDLE/$file.new"; else mv "$BUNDLE/$file.new" "$BUNDLE/$file"; fi
done
echo "== Swift SDK $NAME ($VERSION): $BUNDLE"
