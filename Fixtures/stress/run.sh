#!/usr/bin/env bash
# make test-stress: the concurrency-heavy suites, run again and again on a loaded machine.
#
# A race that only load brings out (a bonded central's subscriptions lost in CI's TSan lane,
# issue 48) passes every run on an idle machine. So each run here has busy loops beside it,
# and runs CI's two concurrent lanes at once: the integration suites on the debug build,
# and the TSan lane (make test-tsan-lane's suites) on the ThreadSanitizer build.
#
#   STRESS_RUNS   how many runs (default 3)
#   STRESS_BUSY   busy loops beside them (default 2: as many as this kind of machine has cores)
#   STRESS_FILTER swift test --filter for the debug lane (default IntegrationTests)
#   STRESS_TSAN   no: leave the TSan lane out
#
# Every run goes on whatever failed; at the end each failure is reported by test name with
# its output (Fixtures/stress/report.py), and the logs stay in artifacts/stress/. The exit
# status is non-zero if any run failed. Waits are hang guards, so a slow run is not a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
RUNS=${STRESS_RUNS:-3}
BUSY=${STRESS_BUSY:-2}
FILTER=${STRESS_FILTER:-IntegrationTests}
TSAN=${STRESS_TSAN:-yes}
TSAN_SKIPS=${TSAN_SKIPS:-}
OUT=artifacts/stress
rm -rf "$OUT" && mkdir -p "$OUT"

loops=()
stop_loops() { for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null; done; loops=(); }
trap stop_loops EXIT
for _ in $(seq 1 "$BUSY"); do
    ( while :; do :; done ) &
    loops+=($!)
done
echo "== stress: $RUNS runs, $BUSY busy loops beside them (pids ${loops[*]:-none})"

started=$SECONDS
for run in $(seq 1 "$RUNS"); do
    run_started=$SECONDS
    $SWIFT test --skip-build --filter "$FILTER" > "$OUT/run-$run-integration.log" 2>&1 &
    debug=$!
    if [ "$TSAN" = yes ]; then
        # shellcheck disable=SC2086  # TSAN_SKIPS is a list of --skip options
        TSAN_OPTIONS="suppressions=$PWD/Tests/tsan-suppressions.txt halt_on_error=1" \
            $SWIFT test --skip-build --sanitize=thread --scratch-path .build/tsan $TSAN_SKIPS \
            > "$OUT/run-$run-tsan.log" 2>&1 &
        tsan=$!
    fi
    status=0
    wait $debug || status=1
    echo "$status" > "$OUT/run-$run-integration.status"
    if [ "$TSAN" = yes ]; then
        status=0
        wait $tsan || status=1
        echo "$status" > "$OUT/run-$run-tsan.status"
    fi
    echo "== stress run $run of $RUNS done in $((SECONDS - run_started)) s:" \
        "integration $( [ "$(cat "$OUT/run-$run-integration.status")" = 0 ] && echo passed || echo FAILED)" \
        "$( [ "$TSAN" = yes ] && { [ "$(cat "$OUT/run-$run-tsan.status")" = 0 ] && echo ", tsan passed" || echo ", tsan FAILED"; })"
done
stop_loops
echo "== stress: $RUNS runs in $((SECONDS - started)) s"
exec python3 Fixtures/stress/report.py "$OUT"
