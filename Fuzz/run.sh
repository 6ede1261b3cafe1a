#!/bin/sh
# make fuzz: builds bluejay-fuzz with libFuzzer and AddressSanitizer, cuts seed corpora from
# the recorded traces, then runs every target (or FUZZ_TARGETS="att smp") for FUZZ_TIME
# seconds each, or for FUZZ_RUNS inputs each when that is set. Inputs libFuzzer finds
# interesting accumulate in .build/fuzz/corpus/<target> and are fuzzed again next time. A
# crash or a broken invariant is saved to artifacts/fuzz/ and fails the run (once fixed,
# copy it to Fuzz/Regressions/<target>/). Prints executions per target, and writes them to
# artifacts/fuzz/summary.tsv. Built in release mode by default (Swift keeps its bounds and
# overflow checks there, and the targets ran 1.3 to 3.8 times faster than in debug);
# FUZZ_CONFIG=debug for a build that is quicker to make and to read in a debugger.
set -eu
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
FUZZ_TIME=${FUZZ_TIME:-60}
FUZZ_RUNS=${FUZZ_RUNS:-}
FUZZ_CONFIG=${FUZZ_CONFIG:-release}
SCRATCH=.build/fuzz
ARTIFACTS=artifacts/fuzz

echo "== building bluejay-fuzz ($FUZZ_CONFIG, libFuzzer + AddressSanitizer)"
# SwiftPM hands swiftc one -sanitize= per --sanitize, and swiftc keeps only the last, which
# would leave the Swift code without coverage: the -Xswiftc flag names both at once.
# --sanitize=fuzzer is still needed so SwiftPM lets libFuzzer supply main(). lld, because
# gold warns about every ASan symbol it cannot export.
BLUEJAY_FUZZ=1 $SWIFT build --product bluejay-fuzz -c "$FUZZ_CONFIG" --scratch-path $SCRATCH \
    --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -parse-as-library
$SWIFT build --product bluejay-fuzz-seeds
FUZZER=$SCRATCH/$FUZZ_CONFIG/bluejay-fuzz

rm -rf $SCRATCH/seeds && mkdir -p $SCRATCH/seeds $ARTIFACTS
traces=$(ls Fixtures/traces/*.btsnoop Fixtures/real-traces/*.btsnoop ../shared/traces/*.btsnoop 2>/dev/null || true)
# One line per target: name, longest input, seeds written.
catalogue=$(.build/debug/bluejay-fuzz-seeds $SCRATCH/seeds $traces)
targets=${FUZZ_TARGETS:-$(echo "$catalogue" | cut -d' ' -f1)}
if [ -n "$FUZZ_RUNS" ]; then limit="-runs=$FUZZ_RUNS" budget="$FUZZ_RUNS runs"; else limit="-max_total_time=$FUZZ_TIME" budget="${FUZZ_TIME}s"; fi

printf 'target\texecutions\tseconds\texec/s\tcrashes\n' > $ARTIFACTS/summary.tsv
failed=""
for target in $targets; do
    max_len=$(echo "$catalogue" | awk -v t="$target" '$1 == t { print $2 }')
    [ -n "$max_len" ] || { echo "no fuzz target $target (targets: $(echo "$catalogue" | cut -d' ' -f1 | tr '\n' ' '))" >&2; exit 2; }
    mkdir -p $SCRATCH/corpus/$target
    echo "== $target: $budget, inputs up to $max_len bytes"
    log=$ARTIFACTS/$target.log
    status=0
    start=$(date +%s)
    # The first folder receives new inputs; the others are read only.
    BLUEJAY_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 $FUZZER \
        $limit -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$target-" \
        $SCRATCH/corpus/$target $SCRATCH/seeds/$target $(ls -d Fuzz/Corpus/$target Fuzz/Regressions/$target 2>/dev/null) \
        > "$log" 2>&1 || status=$?
    seconds=$(( $(date +%s) - start ))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        failed="$failed $target"
        grep -m1 -B2 -A20 "ERROR\|Fatal error\|deadly signal" "$log" >&2 || tail -30 "$log" >&2
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$target" "${executions:-0}" "$seconds" "$(( ${executions:-0} / (seconds > 0 ? seconds : 1) ))" "$crashes" \
        >> $ARTIFACTS/summary.tsv
    echo "   ${executions:-0} executions in ${seconds}s, $( [ $status -eq 0 ] && echo 'no crash' || echo "CRASH (status $status, see $log)")"
done

column -t $ARTIFACTS/summary.tsv
[ -z "$failed" ] || { echo "fuzz: crashes in:$failed (inputs in $ARTIFACTS/)" >&2; exit 1; }
