#!/usr/bin/env bash
# Runs each example app against a fresh Bumble peer, as `make examples` does:
#   Examples/run.sh PYTHON BUILD_DIR EXAMPLE...
# The peer starts its heart-rate measurements on subscription, as a real sensor does. An
# example passes when it exits 0 having printed its last line ("disconnected from …").
set -euo pipefail
python=$1 build=$2; shift 2
cd "$(dirname "$0")/.."
for example in "$@"; do
    out=$(mktemp) store=$(mktemp -d)
    "$python" Fixtures/peer/peer.py --heart-rate-on-subscribe > "$out" 2> "$out.log" & peer=$!
    trap 'kill $peer 2>/dev/null; rm -rf "$out" "$out.log" "$store"' EXIT
    for _ in $(seq 1 100); do grep -q '^READY' "$out" && break; sleep 0.1; done
    grep -q '^READY' "$out" || { echo "the test peer did not start:"; cat "$out.log"; exit 1; }
    transport=$(sed -n 's/^READY transport=\([^ ]*\).*/\1/p' "$out")
    echo "== $example $transport"
    if ! BLUEJAY_STORE=$store timeout 120 "$build/$example" "$transport" 2> "$store/stderr" | tee "$store/stdout"; then
        echo "$example failed; its log:"; cat "$store/stderr"; exit 1
    fi
    grep -q '^disconnected from ' "$store/stdout" || { echo "$example did not finish; its log:"; cat "$store/stderr"; exit 1; }
    kill $peer 2>/dev/null; wait $peer 2>/dev/null || true
    rm -rf "$out" "$out.log" "$store"; trap - EXIT
done
