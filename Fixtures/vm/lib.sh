# What the guest's scripts share (sourced by scenarios.sh and bench.sh).
#
#   wait_for S COMMAND…  poll COMMAND every 10 ms until it succeeds, at most S seconds
#   adapter_up/adapter_down hciN, address_of hciN   (from hciconfig)
#   initialized hciN     the kernel's own init of a new controller is over
#   stop PID             SIGTERM, reaped; killed after 10 s
#   start_btvirt LOG     (re)starts `btvirt -l2` (pid in BTVIRT), waits until hci0 and hci1 are initialized

wait_for() {
    local seconds=$1 deadline
    shift
    deadline=$((SECONDS + seconds))
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.01
    done
}
adapter_up() { hciconfig "$1" 2>/dev/null | grep -qw UP; }
adapter_down() { hciconfig "$1" 2>/dev/null | grep -qw DOWN; }
address_of() { hciconfig "$1" | sed -n 's/.*BD Address: \([0-9A-F:]*\).*/\1/p'; }
# Down, with the address read: until then (about half a second) the user channel is EBUSY.
initialized() { adapter_down "$1" && ! address_of "$1" | grep -q '^00:00:00:00:00:00$'; }

# Ends a process we started (SIGTERM: a background job of a script ignores SIGINT) and reaps
# it; one that outlives 10 s is killed, so a script cannot hang on it.
stop() {
    kill -TERM "$1" 2>/dev/null
    local deadline=$((SECONDS + 10))
    while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# Fresh emulated controllers: btvirt keeps state across hosts that HCI_Reset does not clear
# (after a bluejay run its hci0 hid our advertising from BlueZ's scan for 17 s to over 30 s;
# in vmtest BlueZ's connection attempt was aborted and bluetoothd 5.66 crashed). Stops the
# btvirt in BTVIRT (if any), starts `btvirt -l2` (output appended to LOG) and waits until the
# kernel has finished its own init of both controllers. On a loaded machine under TCG the
# kernel's init can time out (its HCI_Reset unanswered: the controller stays down with a zero
# address, for good), so a btvirt whose controllers did not come up is replaced, three tries
# in all. Fails (status 1) if none came up.
start_btvirt() {  # LOG
    local try
    for try in 1 2 3; do
        if [ -n "${BTVIRT:-}" ]; then
            stop "$BTVIRT"
            wait_for 20 test ! -e /sys/class/bluetooth/hci0 || return 1
        fi
        btvirt -l2 >> "$1" 2>&1 &
        BTVIRT=$!
        if wait_for 20 test -e /sys/class/bluetooth/hci1 && wait_for 30 initialized hci0 && wait_for 30 initialized hci1; then return 0; fi
        echo "btvirt (try $try): hci0/hci1 not initialized: $(dmesg | grep -E 'hci[01]:' | tail -n 2 | tr '\n' ' ')" >> "$1"
    done
    return 1
}

# bluetoothctl, driven from a script:
# commands go in through a FIFO, its output lands in a file, and each wait looks for a
# line printed since the last command, polling the file every 10 ms (not a fixed sleep).
#
#   ctl_start LOG        start bluetoothctl, output to LOG
#   ctl COMMAND…         send one command line
#   ctl_wait S REGEX     wait up to S seconds for REGEX (grep -E) in the output since the last command
#   ctl_pair ADDRESS     pair, answering yes should bluetoothd's agent ask to confirm
#   ctl_stop             quit and reap it
#
# bluetoothctl colours its output and redraws its prompt with escape sequences even when
# not on a terminal; the patterns match inside such lines. stdbuf makes it write each line
# as it prints it (a file would otherwise get its output in 4 KiB blocks).

ctl_start() {
    CTL_LOG=$1
    CTL_FIFO=$(mktemp -u /tmp/bluetoothctl.XXXXXX)
    mkfifo "$CTL_FIFO"
    : > "$CTL_LOG"
    stdbuf -oL bluetoothctl < "$CTL_FIFO" > "$CTL_LOG" 2>&1 &
    CTL_PID=$!
    exec {CTL_FD}> "$CTL_FIFO"
    CTL_MARK=0
}

ctl() {
    CTL_MARK=$(wc -l < "$CTL_LOG")
    # Written from a subshell: to a bluetoothctl that has crashed, the write's SIGPIPE ends
    # the subshell alone, not the script, and the next ctl_wait reports it.
    (printf '%s\n' "$*" >&"$CTL_FD") 2>/dev/null
}

ctl_wait() {
    local deadline=$((SECONDS + $1))
    until tail -n +$((CTL_MARK + 1)) "$CTL_LOG" | grep -aqE -- "$2"; do
        # A bluetoothctl that has ended (BlueZ 5.66's has crashed) prints nothing more: no
        # waiting out the deadline, but one last look at what it printed before it ended.
        kill -0 "$CTL_PID" 2>/dev/null || { tail -n +$((CTL_MARK + 1)) "$CTL_LOG" | grep -aqE -- "$2"; return; }
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.01
    done
}

ctl_pair() {
    ctl pair "$1"
    ctl_wait 60 "Pairing successful|Failed to pair|yes/no" || return 1
    if ctl_output | grep -aq "yes/no"; then
        ctl yes
        ctl_wait 60 "Pairing successful|Failed to pair" || return 1
    fi
    ctl_output | grep -aq "Pairing successful"
}

# The output since the last command, without colours and prompt redraws.
ctl_output() {
    tail -n +$((CTL_MARK + 1)) "$CTL_LOG" | sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r//g' -e 's/\x01\|\x02//g'
}

ctl_stop() {
    (printf 'quit\n' >&"$CTL_FD") 2>/dev/null  # (a subshell, as in ctl)
    exec {CTL_FD}>&-
    # bluetoothctl leaves on quit or at the end of its input; a hang is not waited out.
    local deadline=$((SECONDS + 5))
    while kill -0 "$CTL_PID" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill "$CTL_PID" 2>/dev/null
    wait "$CTL_PID" 2>/dev/null
    rm -f "$CTL_FIFO"
}
