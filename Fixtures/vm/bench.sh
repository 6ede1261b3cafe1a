#!/usr/bin/env bash
# `make vmbench`, inside the guest (Fixtures/vm/run.sh): the same jobs by bluejay and by BlueZ
# on hci0, interleaved, against one peripheral on hci1 (our `bluejay serve`,
# Fixtures/vm/bench.json: a readable characteristic and a flooding one).
#
#   bluejay: the board binary (`make static`) on hci0's user channel, one process per job, as
#            an app started for the job would run; the bonded reconnection also by a process
#            that stays up (`read --each-line`), as BlueZ's daemon does.
#   BlueZ:   the kernel's host stack on hci0 + bluetoothd + dbus-daemon + bluetoothctl (its
#            GATT menu), driven line by line (Fixtures/vm/lib.sh).
#
# Per run and stack: (1) cold start to first value: adapter up, scan, connect, discover, read;
# (2) pairing (not timed), disconnection, then bonded reconnection to first value (bluejay:
# by a new process, and by one already up); (3) a
# notification flood for BENCH_WINDOW seconds: values received by the client per second,
# CPU time of every process involved; (4) the processes' peak RSS (VmHWM).
# One JSON object per run and stack goes to $BENCH_OUT/runs.jsonl; Fixtures/vm/bench-report.py
# takes the medians on the host.
#
#   BLUEJAY       the binary (default .build/static/bluejay-stripped, `make static`)
#   BENCH_RUNS    runs per stack (default 3)
#   BENCH_WINDOW  seconds each flood is measured (default 5)
#   BENCH_OUT     where runs.jsonl and the logs go (a VM_RW share)
#   BENCH_TRIES   tries of a run that fails outside our stack (default 3; see run_stack)
#   BENCH_INJECT_CRASH=1  BlueZ's first try of run 1 gets its bluetoothctl killed by SIGSEGV,
#                 as BlueZ 5.66's once crashed: to see the retry path work
set -uo pipefail
export NO_COLOR=1 PATH=$PATH:/usr/sbin:/sbin
BLUEJAY=${BLUEJAY:-$PWD/.build/static/bluejay-stripped}
RUNS=${BENCH_RUNS:-3}
TRIES=${BENCH_TRIES:-3}
WINDOW=${BENCH_WINDOW:-5}
OUT=${BENCH_OUT:-/tmp/vmbench}
LOGS=$OUT/logs
mkdir -p "$LOGS"
: > "$OUT/runs.jsonl"
. Fixtures/vm/lib.sh

SERVICE=B1E70C00-9D3B-4C7A-8A5E-6F2D0C1B0A00
READABLE=B1E70C01-9D3B-4C7A-8A5E-6F2D0C1B0A00
FLOOD=B1E70C02-9D3B-4C7A-8A5E-6F2D0C1B0A00
VALUE="first value!"   # the readable characteristic's text (bench.json), one hexdump line

# A failure of our stack (bluejay as the central, or as the peripheral) ends the bench.
# (Only our own log: the guest's /tmp lies over the host's, where other runs leave theirs.)
die() { echo "vmbench: $*" >&2; cp /tmp/vmbench-bluetoothctl.log "$LOGS"/ 2>/dev/null; exit 1; }
# A failure outside it (BlueZ's daemons and tools, the emulated controllers) ends only the
# try of the run it happened in: a run's try is a subshell, its exit status 3 says "outside",
# and the reason is left in OUTSIDE for run_stack to record.
OUTSIDE=/tmp/vmbench-outside
outside() {
    local why="$*" status=0
    # A bluetoothctl that has ended is the likely cause: say how (139 = 128 + SIGSEGV).
    if [ -n "${CTL_PID:-}" ] && ! kill -0 "$CTL_PID" 2>/dev/null; then
        wait "$CTL_PID" 2>/dev/null || status=$?
        why+=" (bluetoothctl had ended: exit status $status$([ $status -gt 128 ] && echo ", SIG$(kill -l $((status - 128)))"))"
    fi
    echo "vmbench: $why" >&2
    printf '%s' "$why" | tr '\n' ' ' > "$OUTSIDE"
    exit 3
}

# CPU time (utime + stime, clock ticks) of the processes given.
TICK=$(getconf CLK_TCK)
ticks() {
    local sum=0 pid line fields
    for pid in "$@"; do
        read -r line < "/proc/$pid/stat" 2>/dev/null || continue
        read -ra fields <<< "${line##*) }"
        sum=$((sum + fields[11] + fields[12]))
    done
    echo $sum
}
# CPU time of every kernel thread (children of kthreadd): the kernel's Bluetooth work runs in
# workqueues (hci0's rx/tx/cmd work, hci1's for the peripheral, vhci).
kernel_ticks() {
    cat /proc/[0-9]*/stat 2>/dev/null | awk '{ sub(/^.*\) /, ""); if ($2 == 2) s += $12 + $13 } END { print s + 0 }'
}
hwm_bytes() {
    local sum=0 pid kb
    for pid in "$@"; do
        kb=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null)
        sum=$((sum + ${kb:-0} * 1024))
    done
    echo $sum
}
# The most threads a process had (/proc/PID/status Threads:, every 0.1 s) until it is
# reaped, written to FILE then: run in the background beside the process.
max_threads() {  # PID FILE
    local max=0 key value
    while [ -e "/proc/$1/status" ]; do
        while read -r key value _; do
            [ "$key" = Threads: ] && [ "$value" -gt "$max" ] && max=$value
        done 2>/dev/null < "/proc/$1/status"  # (gone since the test: no message)
        sleep 0.1
    done
    echo "$max" > "$2"
}
# Waits up to $2 seconds for a process to end by itself, then stops it.
reap() {
    local deadline=$((SECONDS + $2))
    while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    stop "$1"
}
seconds_of() { awk -v t="$1" -v hz="$TICK" 'BEGIN { printf "%.3f", t / hz }'; }

echo "== vmbench: kernel $(uname -r), $(bluetoothd -v | sed 's/^/BlueZ /'), $(nproc) vCPUs, $RUNS runs, ${WINDOW} s floods"
modprobe -a algif_hash algif_skcipher cmac ecb || die "modprobe of the AF_ALG modules"
# Fresh emulated controllers for each stack's run (lib.sh: after a bluejay run, btvirt's hci0
# hid our advertising from BlueZ's scan, while BlueZ runs that came first found us at once).
fresh_controllers() { start_btvirt "$LOGS/btvirt.log"; }
fresh_controllers || die "btvirt: no fresh hci0 and hci1 (see btvirt.log)"
PEER=$(address_of hci1)
CENTRAL=$(address_of hci0)
mkdir -p /run/dbus
printf '[General]\nName = BlueZ bench\n[Policy]\nAutoEnable = false\n' > /tmp/main.conf

# The peripheral: our serve on hci1, started afresh for each stack's run (its CPU is in
# neither figure): each run meets an advertiser just enabled and a peripheral with no bond.
start_serve() {  # NAME
    SERVE_LOG=$LOGS/serve-$1.log
    : > "$SERVE_LOG"
    BLUEJAY_STORE=$(mktemp -d) "$BLUEJAY" serve Fixtures/vm/bench.json --transport hci1 ${BENCH_CAPTURE:+--capture "$LOGS/serve-$1.btsnoop"} > "$SERVE_LOG" 2> "$LOGS/serve-$1.err" &
    serve=$!
    wait_for 60 grep -q '^advertising as' "$SERVE_LOG" || die "serve did not start: $(cat "$LOGS/serve-$1.err")"
}
printf '{"stack": "environment", "kernel": "%s", "bluez": "%s", "vcpus": %d, "window_s": %s, "bluejay_binary": "%s", "bluejay_binary_bytes": %d}\n' \
    "$(uname -r)" "$(bluetoothd -v)" "$(nproc)" "$WINDOW" "${BLUEJAY#"$PWD"/}" "$(stat -c %s "$BLUEJAY")" >> "$OUT/runs.jsonl"
start_serve first
echo "== peripheral: bluejay serve on hci1 ($PEER): $(head -n 1 "$SERVE_LOG"); central hci0 ($CENTRAL)"
stop "$serve"

positive() { [ "$("$@")" -gt 0 ]; }
reached() { local n=$1; shift; [ "$("$@")" -ge "$n" ]; }  # N COMMAND…: COMMAND prints N or more
# The flood's sent count, from serve's line when the link ended.
flood_sent() {
    flood_reported() { grep -q '^flood ' "$SERVE_LOG"; }
    wait_for 10 flood_reported || { echo 0; return; }
    grep '^flood ' "$SERVE_LOG" | head -n 1 | sed 's/.*: \([0-9]*\) notifications.*/\1/'
}

# Measures a flood while "$@" (the client's count of values so far) runs: waits for the first
# value, then WINDOW seconds; sets RATE, CPU_*, RECEIVED.
measure_flood() {  # PIDS-VARIABLE COUNT-COMMAND…
    local -n pids=$1
    shift
    wait_for 60 positive "$@" || return 1
    local t0 c0 p0 k0 t1 c1 p1 k1
    stamp_ms; t0=$NOW_MS; c0=$("$@"); p0=$(ticks "${pids[@]}"); k0=$(kernel_ticks); b0=$(ticks $BTVIRT); s0=$(ticks $serve)
    sleep "$WINDOW"  # the measurement window itself
    stamp_ms; t1=$NOW_MS; c1=$("$@"); p1=$(ticks "${pids[@]}"); k1=$(kernel_ticks); b1=$(ticks $BTVIRT); s1=$(ticks $serve)
    # A process gone before the window's end took its CPU time with it: no figure, not a wrong one.
    local pid
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || return 2; done
    RECEIVED=$((c1 - c0))
    RATE=$(awk -v n=$RECEIVED -v ms=$((t1 - t0)) 'BEGIN { printf "%.0f", n * 1000 / ms }')
    CPU_PROCESSES=$(seconds_of $((p1 - p0))); CPU_KERNEL=$(seconds_of $((k1 - k0)))
    CPU_BTVIRT=$(seconds_of $((b1 - b0))); CPU_SERVE=$(seconds_of $((s1 - s0)))
}

# Runs `bluejay read ADDRESS` of the readable characteristic; ELAPSED: ms from the start to
# the value printed (stdbuf: the line is written as printed, not at exit).
timed_read() {  # LABEL ADDRESS
    local t0 pid out=$LOGS/bluejay-$1.out rd lines=() partial=""
    : > "$out"
    exec {rd}< "$out"
    stamp_ms; t0=$NOW_MS
    stdbuf -oL "$BLUEJAY" read "$2" "$SERVICE" "$READABLE" --utf8 --transport hci0 > "$out" 2> "$LOGS/bluejay-$1.err" &
    pid=$!
    printed_value() { read_new_lines "$rd" lines partial; [[ "${lines[*]}" == *"$VALUE"* ]]; }
    wait_for 60 printed_value || die "bluejay $1 read: $(cat "$LOGS/bluejay-$1.err")"
    stamp_ms; ELAPSED=$((NOW_MS - t0))
    exec {rd}<&-
    wait $pid || die "bluejay $1 read failed: $(cat "$LOGS/bluejay-$1.err")"
}

# The bonded reconnection by a bluejay that stays up, as BlueZ's daemon does: one
# `bluejay read --each-line` connects, reads and disconnects for each line it is given. The
# first line's read pays the process start and the controller's init (as timed_read's does)
# and is not timed; the second is, from the line sent to the value printed: connect,
# encryption with the bond, the cached database checked, read. The process says
# "disconnected" once a link is down, so the second starts from no link, as BlueZ's does.
# ELAPSED, as timed_read.
resident_read() {
    local fifo pid fd t0 out=$LOGS/bluejay-resident.out err=$LOGS/bluejay-resident.err rd lines=() partial=""
    fifo=$(mktemp -u /tmp/bluejay-lines.XXXXXX)
    mkfifo "$fifo"
    : > "$out"
    exec {rd}< "$out"
    "$BLUEJAY" read "$PEER/public" "$SERVICE" "$READABLE" --utf8 --each-line --transport hci0 < "$fifo" > "$out" 2> "$err" &
    pid=$!
    exec {fd}> "$fifo"
    # (values: counted from the output as it grows, with builtins alone; see nap in lib.sh)
    values_reach() {
        local line count=0
        read_new_lines "$rd" lines partial
        for line in "${lines[@]}"; do [[ $line == *"$VALUE"* ]] && count=$((count + 1)); done
        [ "$count" -ge "$1" ]
    }
    links_ended() { grep -cx disconnected "$err"; }
    echo first >&$fd
    wait_for 60 values_reach 1 && wait_for 30 reached 1 links_ended || die "bluejay resident first read: $(cat "$err")"
    stamp_ms; t0=$NOW_MS
    echo second >&$fd
    wait_for 60 values_reach 2 || die "bluejay resident read: $(cat "$err")"
    stamp_ms; ELAPSED=$((NOW_MS - t0))
    wait_for 30 reached 2 links_ended || die "bluejay resident read did not disconnect: $(cat "$err")"
    exec {fd}>&- {rd}<&-  # the end of its input: it closes the controller and exits
    rm -f "$fifo"
    reap $pid 20
}

# --- bluejay ---------------------------------------------------------------------------------
run_bluejay() {
    local run=$1 store cold bonded resident pid t0
    store=$(mktemp -d)
    export BLUEJAY_STORE=$store
    wait_for 20 adapter_down hci0 || outside "hci0 is still up (bluetoothd?)"
    # (0) What a new process pays before any link, each run to its end (bash waits for it,
    # no polling): the start alone (`bonds --help`: argument parsing, no controller), and
    # `info`: the start, the controller's bring-up, its reads and the close.
    local started info
    stamp_ms; t0=$NOW_MS
    "$BLUEJAY" bonds --help > /dev/null 2>&1 || die "bluejay bonds --help failed"
    stamp_ms; started=$((NOW_MS - t0))
    stamp_ms; t0=$NOW_MS
    "$BLUEJAY" info --transport hci0 > "$LOGS/bluejay-info.out" 2> "$LOGS/bluejay-info.err" \
        || die "bluejay info: $(cat "$LOGS/bluejay-info.err")"
    stamp_ms; info=$((NOW_MS - t0))
    # (1) A new process, a new store: no bond, no cache; no address type, so it scans for us.
    timed_read cold "$PEER"
    cold=$ELAPSED
    # (2) Pair (LE Secure Connections, Just Works), then a new process reconnects with the bond.
    "$BLUEJAY" pair "$PEER/public" --io none --transport hci0 --json > "$LOGS/bluejay-pair.out" 2> "$LOGS/bluejay-pair.err" \
        || die "bluejay pair: $(cat "$LOGS/bluejay-pair.err")"
    timed_read bonded "$PEER/public"
    bonded=$ELAPSED
    resident_read
    resident=$ELAPSED
    # (3) The flood, one line per value.
    # It ends by itself (--duration), disconnecting: a killed process would leave the link up
    # in the emulated controller (nothing times it out), and our peripheral unreachable.
    # (Its --duration runs from the subscription: on a loaded machine under TCG the first value
    # and the script's own sampling took over 12 s past the window, so the margin is 30 s.)
    "$BLUEJAY" listen "$PEER/public" "$SERVICE" "$FLOOD" --transport hci0 --duration $((WINDOW + 30)) > /tmp/bluejay-flood.out 2> "$LOGS/bluejay-flood.err" &
    pid=$!
    local sampler threads
    max_threads $pid "$LOGS/bluejay-flood.threads" &
    sampler=$!
    local processes=($pid)
    count_lines() { wc -l < /tmp/bluejay-flood.out; }
    measure_flood processes count_lines || die "bluejay listen received nothing or ended before the window did: $(cat "$LOGS/bluejay-flood.err")"
    local hwm
    hwm=$(hwm_bytes $pid)
    reap $pid $((WINDOW + 60))
    wait $sampler
    threads=$(cat "$LOGS/bluejay-flood.threads")
    local sent
    sent=$(flood_sent)
    tail -n 1 /tmp/bluejay-flood.out > "$LOGS/bluejay-flood.last"
    rm -f /tmp/bluejay-flood.out
    unset BLUEJAY_STORE
    printf '{"stack": "bluejay", "run": %d, "first_value_ms": %d, "bonded_first_value_ms": %d, "bonded_resident_first_value_ms": %d, "process_start_ms": %d, "info_ms": %d, "notifications_per_s": %s, "received": %d, "sent": %s, "window_s": %s, "cpu_s": {"bluejay": %s}, "kernel_threads_s": %s, "btvirt_s": %s, "peripheral_s": %s, "peak_rss_bytes": {"bluejay": %d}, "threads": %d, "retries": [%s]}\n' \
        "$run" "$cold" "$bonded" "$resident" "$started" "$info" "$RATE" "$RECEIVED" "${sent:-0}" "$WINDOW" "$CPU_PROCESSES" "$CPU_KERNEL" "$CPU_BTVIRT" "$CPU_SERVE" "$hwm" "$threads" "$RETRIES_JSON" >> "$OUT/runs.jsonl"
    echo "   bluejay run $run: start ${started} ms, info ${info} ms, first value ${cold} ms, bonded ${bonded} ms (staying up ${resident} ms), flood ${RATE}/s (${RECEIVED} in ${WINDOW} s, peripheral sent ${sent:-?} in all), CPU bluejay ${CPU_PROCESSES} s + kernel threads ${CPU_KERNEL} s, VmHWM $((hwm / 1024)) KiB, ${threads} threads at most"
}

# --- BlueZ -----------------------------------------------------------------------------------
run_bluez() {
    local run=$1 t0 cold bonded
    # (Not local: stop_bluez, run on a failed try's exit, stops what was started.)
    dbus="" bluetoothd=""
    rm -rf /var/lib/bluetooth/*
    wait_for 20 adapter_down hci0 || outside "hci0 is up before bluetoothd starts"
    rm -f /run/dbus/pid  # the last run's daemon is gone; its pid file is not
    dbus-daemon --system --fork --print-pid > /tmp/dbus.pid || outside "dbus-daemon"
    dbus=$(head -n 1 /tmp/dbus.pid)
    # (1) From bluetoothd's start: adapter up (power on), scan, connect, discover, read.
    stamp_ms; t0=$NOW_MS
    bluetoothd -n -f /tmp/main.conf > "$LOGS/bluetoothd-$run.log" 2>&1 &
    bluetoothd=$!
    ctl_start "/tmp/vmbench-bluetoothctl.log"
    [ "${BENCH_INJECT_CRASH:-}" = 1 ] && [ "$run" = 1 ] && [ "$TRY" = 1 ] && kill -SEGV $CTL_PID
    ctl_wait 30 "Agent registered" || outside "bluetoothctl did not start: $(ctl_output | tail -n 5)"
    ctl power on
    ctl_wait 30 "Changing power on succeeded" || outside "power on: $(ctl_output | tail -n 5)"
    stamp_ms; local powered=$((NOW_MS - t0))
    ctl scan on
    ctl_wait 30 "Device $PEER" || outside "BlueZ did not find $PEER: $(ctl_output | tail -n 5)"
    stamp_ms; local found=$((NOW_MS - t0))
    ctl scan off
    ctl connect "$PEER"
    ctl_wait 60 "Connection successful" || outside "BlueZ connect: $(ctl_output | tail -n 8)"
    stamp_ms; local connected=$((NOW_MS - t0))
    ctl_wait 60 "ServicesResolved: yes" || outside "BlueZ discovery: $(ctl_output | tail -n 8)"
    stamp_ms; local resolved=$((NOW_MS - t0))
    ctl gatt.select-attribute "${READABLE,,}"
    ctl gatt.read
    ctl_wait 30 "$VALUE" || outside "BlueZ read: $(ctl_output | tail -n 8)"
    stamp_ms; cold=$((NOW_MS - t0))
    # (2) Pair, disconnect, reconnect bonded (BlueZ keeps the bond and the GATT cache).
    ctl_pair "$PEER" || outside "BlueZ pair: $(ctl_output | tail -n 8)"
    ctl disconnect "$PEER"
    ctl_wait 30 "Successful disconnected|Connected: no" || outside "BlueZ disconnect: $(ctl_output | tail -n 8)"
    stamp_ms; t0=$NOW_MS
    ctl connect "$PEER"
    ctl_wait 60 "ServicesResolved: yes" || outside "BlueZ reconnect: $(ctl_output | tail -n 8)"
    ctl gatt.select-attribute "${READABLE,,}"
    ctl gatt.read
    ctl_wait 30 "$VALUE" || outside "BlueZ bonded read: $(ctl_output | tail -n 8)"
    stamp_ms; bonded=$((NOW_MS - t0))
    # (3) The flood through StartNotify: each value a PropertiesChanged signal to bluetoothctl.
    ctl gatt.select-attribute "${FLOOD,,}"
    ctl gatt.notify on
    local processes=($bluetoothd $dbus $CTL_PID)
    count_values() { tail -n +$((CTL_MARK + 1)) "$CTL_LOG" | grep -ac "Value:"; }
    measure_flood processes count_values || outside "bluetoothctl received no notifications, or a process of BlueZ's ended before the window did: $(ctl_output | tail -n 8)"
    local hwm_bluetoothd hwm_dbus hwm_ctl
    hwm_bluetoothd=$(hwm_bytes $bluetoothd); hwm_dbus=$(hwm_bytes $dbus); hwm_ctl=$(hwm_bytes $CTL_PID)
    ctl gatt.notify off
    local sent
    sent=$(flood_sent)
    ctl disconnect "$PEER"
    ctl_wait 30 "Successful disconnected|Connected: no" || true
    ctl_stop
    cp "$CTL_LOG" "$LOGS/bluetoothctl-$run.log" 2>/dev/null
    tail -c 2000 "$CTL_LOG" > "$LOGS/bluetoothctl-$run.tail"
    rm -f "$CTL_LOG"
    stop $bluetoothd
    stop $dbus
    printf '{"stack": "bluez", "run": %d, "first_value_ms": %d, "first_value_steps_ms": {"powered": %d, "found": %d, "connected": %d, "services_resolved": %d}, "bonded_first_value_ms": %d, "notifications_per_s": %s, "received": %d, "sent": %s, "window_s": %s, "cpu_s": {"bluetoothd+dbus-daemon+bluetoothctl": %s}, "kernel_threads_s": %s, "btvirt_s": %s, "peripheral_s": %s, "peak_rss_bytes": {"bluetoothd": %d, "dbus-daemon": %d, "bluetoothctl": %d}, "retries": [%s]}\n' \
        "$run" "$cold" "$powered" "$found" "$connected" "$resolved" "$bonded" "$RATE" "$RECEIVED" "${sent:-0}" "$WINDOW" "$CPU_PROCESSES" "$CPU_KERNEL" "$CPU_BTVIRT" "$CPU_SERVE" \
        "$hwm_bluetoothd" "$hwm_dbus" "$hwm_ctl" "$RETRIES_JSON" >> "$OUT/runs.jsonl"
    echo "   BlueZ run $run: first value ${cold} ms (powered ${powered}, found ${found}, connected ${connected}, services resolved ${resolved}), bonded ${bonded} ms, flood ${RATE}/s (${RECEIVED} in ${WINDOW} s, peripheral sent ${sent:-?} in all), CPU bluetoothd+dbus-daemon+bluetoothctl ${CPU_PROCESSES} s + kernel threads ${CPU_KERNEL} s, VmHWM bluetoothd $((hwm_bluetoothd / 1024)) + dbus-daemon $((hwm_dbus / 1024)) + bluetoothctl $((hwm_ctl / 1024)) KiB"
}

# What a failed try of a BlueZ run leaves running (the processes it started).
stop_bluez() {
    [ -n "${CTL_PID:-}" ] && ctl_stop
    [ -n "${bluetoothd:-}" ] && stop "$bluetoothd"
    [ -n "${dbus:-}" ] && stop "$dbus"
}
# A JSON string of one line of text (control characters, colours included, dropped).
json_string() {
    local text
    text=$(printf '%s' "$1" | tr '\n' ' ' | tr -d '\000-\037' | cut -c1-300)
    text=${text//\\/\\\\}
    printf '"%s"' "${text//\"/\\\"}"
}
# One run of a stack (STACK RUN), tried up to TRIES times while it fails outside our stack
# (seen: BlueZ 5.66's bluetoothctl died of a segmentation fault as it started, and the whole
# bench ended). Each try has fresh controllers and a fresh peripheral, and runs in a subshell
# so that a failure ends only the try. The failed tries' reasons go into the run's JSON line
# ("retries": [{"try", "reason"}]) and so into the report. A failure of our stack (status
# 1, or our peripheral gone) ends the bench at once, as does a run that never succeeds.
run_stack() {
    local stack=$1 run=$2 status reason
    RETRIES_JSON=""
    for TRY in $(seq 1 "$TRIES"); do
        rm -f "$OUTSIDE"
        if fresh_controllers; then
            start_serve "$stack-$run"
            ( trap '[ $? = 0 ] || stop_bluez' EXIT; "run_$stack" "$run" )
            status=$?
            kill -0 "$serve" 2>/dev/null || die "$stack run $run: our peripheral (bluejay serve) ended during the run: $(tail -n 5 "$LOGS/serve-$stack-$run.err")"
            stop "$serve"
        else
            status=3
            echo "btvirt: no fresh hci0 and hci1 (see btvirt.log)" > "$OUTSIDE"
        fi
        [ "$status" = 0 ] && return 0
        [ "$status" = 3 ] || { echo "vmbench: $stack run $run failed (exit status $status), not for a reason known to lie outside our stack: not tried again; the bench ends" >&2; exit 1; }
        reason=$(cat "$OUTSIDE" 2>/dev/null)
        reason=${reason:-unknown}
        RETRIES_JSON+="${RETRIES_JSON:+, }{\"try\": $TRY, \"reason\": $(json_string "$reason")}"
        if [ "$stack" = bluez ]; then  # the next try writes over these
            cp /tmp/vmbench-bluetoothctl.log "$LOGS/bluetoothctl-$run-try$TRY.log" 2>/dev/null
            cp "$LOGS/bluetoothd-$run.log" "$LOGS/bluetoothd-$run-try$TRY.log" 2>/dev/null
        fi
        echo "   $stack run $run, try $TRY of $TRIES: failed outside our stack: $reason"
    done
    die "$stack run $run failed $TRIES times, each outside our stack (BlueZ or the emulated controllers); the last: $reason"
}

for run in $(seq 1 "$RUNS"); do
    echo "== run $run of $RUNS"
    # Interleaved, the order alternating, so a drift in the machine's speed falls on both.
    if [ $((run % 2)) = 1 ]; then order="bluejay bluez"; else order="bluez bluejay"; fi
    for stack in $order; do
        run_stack "$stack" "$run"
    done
done
stop "$BTVIRT"
echo "== vmbench: $RUNS runs done"
