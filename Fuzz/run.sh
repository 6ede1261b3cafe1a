#!/bin/sh
# make fuzz: builds bluejay-fuzz with libFuzzer and AddressSanitizer, cuts seed corpora from
# the recorded traces, then runs every target (or FUZZ_TARGETS="att smp") for FUZZ_TIME
# seconds each. Inputs libFuzzer finds interesting accumulate in .build/fuzz/corpus; a
# crash is saved to artifacts/fuzz/ and fails the run (copy it to Fuzz/Regressions/<target>/
# once fixed). Prints executions per target, and writes them to artifacts/fuzz/summary.tsv.
set -eu
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
FUZZ_TIME=${FUZZ_TIME:-60}
SCRATCH=.build/fuzz
ARTIFACTS=artifacts/fuzz

echo "== building bluejay-fuzz (libFuzzer + AddressSanitizer)"
BLUEJAY_FUZZ=1 $SWIFT build --product bluejay-fuzz --sanitize=fuzzer --sanitize=address --scratch-path $SCRATCH
$SWIFT build --product bluejay-fuzz-seeds
FUZZER=$SCRATCH/debug/bluejay-fuzz

rm -rf $SCRATCH/seeds && mkdir -p $SCRATCH/seeds $ARTIFACTS
traces=$(ls Fixtures/traces/*.btsnoop ../shared/traces/*.btsnoop 2>/dev/null || true)
# One line per target: name, longest input, seeds written.
catalogue=$(.build/debug/bluejay-fuzz-seeds $SCRATCH/seeds $traces)
targets=${FUZZ_TARGETS:-$(echo "$catalogue" | cut -d' ' -f1)}

printf 'target\texecutions\tseconds\tcrashes\n' > $ARTIFACTS/summary.tsv
failed=""
for target in $targets; do
    max_len=$(echo "$catalogue" | awk -v t="$target" '$1 == t { print $2 }')
    [ -n "$max_len" ] || { echo "no fuzz target $target (targets: $(echo "$catalogue" | cut -d' ' -f1 | tr '\n' ' '))" >&2; exit 2; }
    mkdir -p $SCRATCH/corpus/$target
    echo "== $target: ${FUZZ_TIME}s, inputs up to $max_len bytes"
    log=$ARTIFACTS/$target.log
    status=0
    # The first folder receives new inputs; the others are read only.
    BLUEJAY_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 $FUZZER \
        -max_total_time="$FUZZ_TIME" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$target-" \
        $SCRATCH/corpus/$target $SCRATCH/seeds/$target $(ls -d Fuzz/Corpus/$target Fuzz/Regressions/$target 2>/dev/null) \
        > "$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        failed="$failed $target"
        grep -m1 -B2 -A20 "ERROR\|Fatal error\|deadly signal" "$log" >&2 || tail -30 "$log" >&2
    fi
    printf '%s\t%s\t%s\t%s\n' "$target" "${executions:-0}" "$FUZZ_TIME" "$crashes" >> $ARTIFACTS/summary.tsv
    echo "   ${executions:-0} executions, $( [ $status -eq 0 ] && echo 'no crash' || echo "CRASH (status $status, see $log)")"
done

column -t $ARTIFACTS/summary.tsv
[ -z "$failed" ] || { echo "fuzz: crashes in:$failed (inputs in $ARTIFACTS/)" >&2; exit 1; }
