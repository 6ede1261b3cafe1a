# What the guest's scripts share (sourced by scenarios.sh and bench.sh).
#
#   wait_for S COMMAND…  poll COMMAND every 10 ms until it succeeds, at most S seconds
#   nap [SECONDS]        sleep (10 ms by default) with no process forked
#   stamp_ms             NOW_MS: milliseconds of the wall clock, with no process forked
#   adapter_up/adapter_down hciN, address_of hciN   (from hciconfig)
#   initialized hciN     the kernel's own init of a new controller is over
#   stop PID             SIGTERM, reaped; killed after 10 s
#   start_btvirt LOG     (re)starts `btvirt -l2` (pid in BTVIRT), waits until hci0 and hci1 are initialized

# Under TCG on one vCPU, every process the polling forks (sleep, grep, tail, a command
# substitution's subshell) takes its share of the CPU from the process being timed: a
# bluejay starting up lost most. The waits on a timed path therefore use bash builtins
# alone: a nap is a `read` with a timeout on a FIFO that nothing writes to.
NAP_FIFO=$(mktemp -u /tmp/nap.XXXXXX)
mkfifo "$NAP_FIFO"
exec {NAP_FD}<> "$NAP_FIFO"
rm -f "$NAP_FIFO"
nap() { read -r -t "${1:-0.01}" -u "$NAP_FD" NAP_DISCARD || true; }
stamp_ms() { local t=${EPOCHREALTIME/./}; NOW_MS=$((t / 1000)); }

wait_for() {
    local seconds=$1 deadline
    shift
    deadline=$((SECONDS + seconds))
    until "$@"; do
        [ $SECONDS -lt $deadline ] || return 1
        nap
    done
}

# Following a file another process writes, from where the last look ended, with builtins
# alone (see nap): FD is the file opened for reading; each whole line read is appended to
# the array LINES names; an unfinished last line waits in the variable PARTIAL names.
# mapfile, not a `read` loop: after BlueZ's flood, bluetoothctl's output holds some 10 MB
# of hex dumps, which a loop in bash reads slower under TCG than bluetoothctl writes them.
read_new_lines() {  # FD LINES PARTIAL
    local -n follow_lines=$2 follow_partial=$3
    local follow_new=() follow_count
    mapfile -u "$1" follow_new
    follow_count=${#follow_new[@]}
    [ "$follow_count" -gt 0 ] || return 0
    follow_new[0]=$follow_partial${follow_new[0]}
    follow_partial=""
    if [[ ${follow_new[follow_count - 1]} != *$'\n' ]]; then
        follow_partial=${follow_new[follow_count - 1]}
        unset 'follow_new[follow_count - 1]'
    fi
    follow_lines+=("${follow_new[@]%$'\n'}")
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
# line printed since the last command, reading what the file gained every 10 ms (not a
# fixed sleep), with no process forked (see nap).
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
    exec {CTL_RD}< "$CTL_LOG"
    # CTL_SEEN: the whole lines printed since the last command; CTL_PARTIAL: an unfinished
    # one (a prompt); CTL_LINES: whole lines before the last command (for ctl_output).
    CTL_SEEN=() CTL_PARTIAL="" CTL_LINES=0 CTL_MARK=0
}

ctl() {
    read_new_lines "$CTL_RD" CTL_SEEN CTL_PARTIAL
    CTL_LINES=$((CTL_LINES + ${#CTL_SEEN[@]}))
    CTL_MARK=$CTL_LINES
    CTL_SEEN=()
    # To a bluetoothctl that has crashed the write fails (EPIPE, SIGPIPE ignored for it
    # alone) and the next ctl_wait reports it; the script goes on.
    trap '' PIPE
    printf '%s\n' "$*" >&"$CTL_FD" 2>/dev/null
    trap - PIPE
}

# Whether a line printed since the last command matches REGEX (an ERE, as grep -E takes).
# The lines this wait has looked at already (CTL_LOOKED) are not looked at again, and the
# rest are matched as one text, a line a line: after BlueZ's flood, bluetoothctl goes on
# printing values it had queued, thousands of lines, and a loop over them in bash on every
# look took longer under TCG with each look.
ctl_seen() {
    read_new_lines "$CTL_RD" CTL_SEEN CTL_PARTIAL
    local IFS=$'\n'
    [[ "${CTL_SEEN[*]:CTL_LOOKED}"$'\n'"$CTL_PARTIAL" =~ $1 ]] && return 0
    CTL_LOOKED=${#CTL_SEEN[@]}
    return 1
}

ctl_wait() {
    local deadline=$((SECONDS + $1))
    CTL_LOOKED=0
    until ctl_seen "$2"; do
        # A bluetoothctl that has ended (BlueZ 5.66's has crashed) prints nothing more: no
        # waiting out the deadline, but one last look at what it printed before it ended.
        kill -0 "$CTL_PID" 2>/dev/null || { ctl_seen "$2"; return; }
        [ $SECONDS -lt $deadline ] || return 1
        nap
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
    trap '' PIPE  # (as in ctl)
    printf 'quit\n' >&"$CTL_FD" 2>/dev/null
    trap - PIPE
    exec {CTL_FD}>&- {CTL_RD}<&-
    # bluetoothctl leaves on quit or at the end of its input; a hang is not waited out.
    local deadline=$((SECONDS + 5))
    while kill -0 "$CTL_PID" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill "$CTL_PID" 2>/dev/null
    wait "$CTL_PID" 2>/dev/null
    rm -f "$CTL_FIFO"
}
