#!/bin/sh
# Regenerates the recorded sessions of Fixtures/traces from the Bumble peer (`make traces`).
# Usage: Fixtures/traces/record.sh PYTHON BLUEJAY [NAME...]   (no NAME: every session)
# Each session of sessions.txt is recorded against a fresh host connection to one peer
# process (a fresh controller and reset GATT values per connection), with an empty store
# (or the one its set-up steps in setups.txt leave, kept as NAME.store), then checked: its exit status is the one listed, every packet decodes
# (`bluejay trace --check`), and it replays three times with the same output. The transport
# string is written as TRANSPORT in NAME.out and NAME.err, since a replay names another.
set -eu
python=$1 bluejay=$2
shift 2
cd "$(dirname "$0")/../.."
dir=Fixtures/traces
work=$(mktemp -d)
out=$work/peer.out
"$python" Fixtures/peer/peer.py > "$out" 2> "$work/peer.log" &
peer=$!
trap 'kill $peer 2>/dev/null; wait $peer 2>/dev/null; rm -rf "$work"' EXIT
for i in $(seq 1 100); do grep -q '^READY' "$out" && break; sleep 0.1; done
grep -q '^READY' "$out" || { echo "the test peer did not start:"; cat "$work/peer.log"; exit 1; }
transport=$(sed -n 's/^READY transport=\([^ ]*\).*/\1/p' "$out")
status=0
grep -v '^#' $dir/sessions.txt | grep -v '^ *$' | while read -r name expected args; do
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    store=$(mktemp -d "$work/store.XXXXXX")
    # A session with set-up steps (setups.txt) is recorded on the store they leave (a bond,
    # a GATT cache), kept beside it as NAME.store for the replays.
    rm -rf "$dir/$name.store"
    grep -v '^#' $dir/setups.txt | grep -v '^ *$' | while read -r setup setupargs; do
        [ "$setup" = "$name" ] || continue
        # shellcheck disable=SC2086
        BLUEJAY_STORE=$store "$bluejay" $setupargs --transport "$transport" > /dev/null 2> "$work/setup.err" \
            || { echo "$name: set-up step failed: $setupargs"; cat "$work/setup.err"; exit 1; }
    done
    if grep -q "^$name " $dir/setups.txt; then cp -R "$store" "$dir/$name.store"; fi
    set +e
    # shellcheck disable=SC2086 # the arguments are words
    BLUEJAY_STORE=$store "$bluejay" $args --transport "$transport" --capture "$dir/$name.btsnoop" > "$work/live.out" 2> "$work/live.err"
    code=$?
    set -e
    sed "s|$transport|TRANSPORT|g" "$work/live.out" > "$dir/$name.out"
    sed "s|$transport|TRANSPORT|g" "$work/live.err" > "$dir/$name.err"
    if [ "$code" != "$expected" ]; then
        echo "$name: exit status $code, sessions.txt says $expected:"; cat "$dir/$name.err"; exit 1
    fi
    "$bluejay" trace --check "$dir/$name.btsnoop" > /dev/null
    for round in 1 2 3; do
        store=$(mktemp -d "$work/store.XXXXXX")
        if [ -d "$dir/$name.store" ]; then cp -R "$dir/$name.store/." "$store"; fi
        set +e
        # shellcheck disable=SC2086
        BLUEJAY_STORE=$store "$bluejay" $args --transport "replay:$dir/$name.btsnoop" > "$work/live.out" 2> "$work/live.err"
        code=$?
        set -e
        sed "s|replay:$dir/$name.btsnoop|TRANSPORT|g" "$work/live.out" > "$work/replay.out"
        sed "s|replay:$dir/$name.btsnoop|TRANSPORT|g" "$work/live.err" > "$work/replay.err"
        if [ "$code" != "$expected" ] || ! cmp -s "$work/replay.out" "$dir/$name.out" || ! cmp -s "$work/replay.err" "$dir/$name.err"; then
            echo "$name: replay $round differs from the recording (exit $code):"; cat "$work/replay.err"
            diff "$dir/$name.out" "$work/replay.out" || true
            exit 1
        fi
    done
    echo "$name: $("$bluejay" trace --summary "$dir/$name.btsnoop" | head -1 | sed 's/.*: //'), replays"
done
