#!/usr/bin/env bash
# Every `make vmtest` scenario, in one boot. Runs as root inside the guest (Fixtures/vm/run.sh),
# from the repository root, with the host's debug build: .build/debug/bluejay and the test bundle.
#
#   1. bring-up on hci0 over the user channel, right after the controller appears
#   2. the user-channel Swift tests (UserChannelTests), run from the prebuilt .xctest bundle
#   3. the error paths through the CLI, with the exact messages: EBUSY (we hold it), ENODEV, EPERM
#   4. bluetoothd powering the adapter → EBUSY, and both fixes the message names
#   5. interop with real BlueZ: kernel host + bluetoothd on hci1, bluejay on hci0 (scan,
#      GATT, read, pairing, bonded reconnection)
#   6. real BlueZ as the central against our peripheral: `bluejay serve` on hci0, bluetoothd +
#      bluetoothctl on hci1 (scan, connect, GATT database, read, notifications, pairing)
#
# VM_ARTIFACTS (a host directory shared read-write) receives the btsnoop captures and logs.
set -uo pipefail
export NO_COLOR=1 PATH=$PATH:/usr/sbin:/sbin
# Bonds and the GATT cache of this run only.
export BLUEJAY_STORE=$(mktemp -d)
BLUEJAY=$PWD/.build/debug/bluejay
BUNDLE=$PWD/.build/debug/BluejayPackageTests.xctest
. Fixtures/vm/lib.sh
ARTIFACTS=${VM_ARTIFACTS:-/tmp/artifacts}
mkdir -p "$ARTIFACTS"
LOGS=/tmp/vm-logs
mkdir -p "$LOGS"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok     $*"; }
fail() { failed=$((failed + 1)); echo "FAILED $*"; }
step() { echo; echo "== $*"; }


# Runs bluejay, keeping stdout/stderr/status in OUT, ERR and STATUS. A hang is a failure
# reported here (status 124), not a machine killed by run.sh's overall timeout.
bluejay() {
    timeout 60 "$BLUEJAY" "$@" > "$LOGS/out" 2> "$LOGS/err"
    STATUS=$?
    OUT=$(cat "$LOGS/out")
    ERR=$(cat "$LOGS/err")
}

# An error path ($1 describes it): bluejay must exit 1 with exactly one stderr line that names
# the errno $2 (EBUSY, ...), and
# docs/Boards.md, the page on running on a real board, must quote that line verbatim.
expect_error() {
    local what=$1 code=$2
    echo "   $what: $ERR"
    if [ "$STATUS" != 1 ]; then fail "$what: exit status $STATUS, expected 1"; return; fi
    if [ "$(printf '%s\n' "$ERR" | wc -l)" != 1 ]; then fail "$what: expected one line on stderr"; return; fi
    if ! grep -qF -- "$code" <<< "$ERR"; then fail "$what: the message does not say $code"; return; fi
    if ! grep -qF -- "$ERR" docs/Boards.md; then fail "$what: docs/Boards.md does not quote this message verbatim"; return; fi
    pass "$what"
}

step "kernel $(uname -r), $(bluetoothd -v 2>/dev/null | sed 's/^/BlueZ /')"
# btvirt's LE crypto goes through AF_ALG; load those modules now rather than from inside the
# controller's first commands, where a slow on-demand load can outlast the kernel's init timeout.
modprobe -a algif_hash algif_skcipher cmac ecb || fail "modprobe of the AF_ALG modules"
# Not start_btvirt: step 1 opens hci0 the moment it appears, during the kernel's init.
attach_btvirt() {
    [ -z "${BTVIRT:-}" ] || { stop "$BTVIRT"; wait_for 20 test ! -e /sys/class/bluetooth/hci0; }
    btvirt -l2 >> "$LOGS/btvirt.log" 2>&1 &
    BTVIRT=$!
    wait_for 20 test -e /sys/class/bluetooth/hci1
}
if attach_btvirt; then pass "btvirt -l2 attached hci0 and hci1"; else
    fail "btvirt attached no controllers"; cat "$LOGS/btvirt.log"; echo "vmtest: $passed passed, $failed failed"; exit 1
fi

step "1. bluejay info --transport hci0, the moment hci0 appears"
# Under TCG on a loaded host the kernel's own init of a new controller can time out (its
# HCI_Reset unanswered: dmesg "Opcode 0x0c03 failed: -110"), and that controller is dead for
# good (EBUSY, never initialized). That is the emulation's, not ours: such a btvirt is
# replaced and the step run again on the new one, three tries in all. A failure of ours
# leaves a controller the kernel did initialize, and is reported at once.
for try in 1 2 3; do
    bluejay info --transport hci0 --capture "$ARTIFACTS/info-hci0.btsnoop"
    [ "$STATUS" != 0 ] || break
    if wait_for 30 initialized hci0 && wait_for 30 initialized hci1; then break; fi
    echo "   (try $try) the kernel did not initialize this btvirt's controllers: $(dmesg | grep -E 'hci[01]:' | tail -n 1); a new btvirt"
    [ $try = 3 ] || attach_btvirt || break
done
echo "$OUT" | sed 's/^/   /'
if [ "$STATUS" = 0 ] && grep -q "^Address: *$(address_of hci0)\$" <<< "$OUT"; then
    pass "info on hci0 over the user channel: the address the kernel read"
else
    fail "info on hci0 (status $STATUS): $ERR"
fi

step "2. the user-channel Swift tests, from the prebuilt bundle"
timeout 150 "$BUNDLE" --testing-library swift-testing --filter UserChannelTests 2>&1 | tee "$LOGS/swift-tests.log" | grep --line-buffered -v -e '^↳' -e ' started\.$' | sed -u 's/^/   /'
tests_status=${PIPESTATUS[0]}
summary=$(grep -E 'Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)' "$LOGS/swift-tests.log" || true)
if [ $tests_status != 0 ] || [ -z "$summary" ]; then
    fail "UserChannelTests (exit $tests_status)"
elif grep -q ' skipped' "$LOGS/swift-tests.log"; then
    fail "UserChannelTests: a test was skipped, which is not a pass"
elif ! grep -q 'Test run with 6 tests' <<< "$summary"; then
    fail "UserChannelTests: expected 6 tests to run: $summary"
else
    pass "UserChannelTests: $summary"
fi

step "3. the error paths through the CLI"
# EBUSY: a second bluejay while a first one holds hci0.
"$BLUEJAY" scan --transport hci0 --duration 600 --verbose > /dev/null 2> "$LOGS/holder.err" &
holder=$!
if wait_for 60 grep -q 'bluejay: debug: < ' "$LOGS/holder.err"; then
    bluejay info --transport hci0
    expect_error "EBUSY while another bluejay holds hci0" EBUSY
else
    fail "the holding scan never started: $(cat "$LOGS/holder.err")"
fi
kill -TERM $holder
wait $holder
bluejay info --transport hci0
if [ "$STATUS" = 0 ]; then pass "after the holder was terminated (SIGTERM), hci0 opens"; else fail "reopen after SIGTERM: $ERR"; fi

# ENODEV: an adapter that does not exist; the message lists the ones that do.
bluejay info --transport hci7
expect_error "ENODEV for hci7" "ENODEV"
grep -qF "adapters present: hci0, hci1" <<< "$ERR" && pass "ENODEV lists hci0 and hci1" || fail "ENODEV does not list hci0, hci1"

# EPERM: an ordinary user without CAP_NET_ADMIN; then the fix the message names (setcap).
STATUS=0
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BLUEJAY" info --transport hci0 > "$LOGS/out" 2> "$LOGS/err" || STATUS=$?
ERR=$(cat "$LOGS/err")
expect_error "EPERM without CAP_NET_ADMIN" "EPERM"
cp "$BLUEJAY" /tmp/bluejay-setcap
setcap cap_net_admin+ep /tmp/bluejay-setcap
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all /tmp/bluejay-setcap info --transport hci0 > "$LOGS/out" 2> "$LOGS/err"; then
    pass "the same user with 'setcap cap_net_admin+ep' on the binary opens hci0"
else
    fail "setcap cap_net_admin+ep did not help: $(cat "$LOGS/err")"
fi

step "4. bluetoothd powers the adapters → EBUSY, and the fixes the message names"
mkdir -p /run/dbus
dbus-daemon --system --fork || fail "dbus-daemon"
start_bluetoothd() {
    bluetoothd -n "$@" >> "$LOGS/bluetoothd.log" 2>&1 &
    bluetoothd=$!
}
stop_bluetoothd() {
    kill -TERM $bluetoothd
    wait $bluetoothd
}
start_bluetoothd
if wait_for 30 adapter_up hci0; then
    bluejay info --transport hci0
    expect_error "EBUSY while bluetoothd has powered hci0" EBUSY
    grep -qF "btmgmt -i hci0 power off" <<< "$ERR" && pass "EBUSY names 'btmgmt -i hci0 power off'" || fail "EBUSY does not name btmgmt"
else
    fail "bluetoothd did not power hci0 up"
fi
# Fix 1: stop bluetoothd (it powers its adapters down as it exits).
stop_bluetoothd
if wait_for 10 adapter_down hci0; then
    bluejay info --transport hci0
    [ "$STATUS" = 0 ] && pass "with bluetoothd stopped, hci0 opens" || fail "with bluetoothd stopped: $ERR"
else
    fail "hci0 stayed up after bluetoothd stopped"
fi
# Fix 2: bluetoothd running, the adapter powered down with btmgmt.
start_bluetoothd
if wait_for 30 adapter_up hci0; then
    btmgmt -i hci0 power off < /dev/null > "$LOGS/btmgmt.log" 2>&1
    if wait_for 10 adapter_down hci0; then
        bluejay info --transport hci0
        [ "$STATUS" = 0 ] && pass "with bluetoothd running and 'btmgmt -i hci0 power off', hci0 opens" || fail "after btmgmt power off: $ERR"
    else
        fail "btmgmt -i hci0 power off left hci0 up: $(cat "$LOGS/btmgmt.log")"
    fi
else
    fail "bluetoothd did not power hci0 up again"
fi
stop_bluetoothd

step "5. interop with real BlueZ: kernel host + bluetoothd on hci1, bluejay on hci0"
# bluetoothd must not power hci0 each time bluejay hands it back, so this one powers only
# hci1, through the kernel's management interface, and advertises there.
printf '[General]\nName = BlueZ peer\n[Policy]\nAutoEnable = false\n' > /tmp/main.conf
start_bluetoothd -f /tmp/main.conf
peer=$(address_of hci1)
# bluetoothd sets its own modes while it adopts an adapter; settings made before it has
# published the adapter on D-Bus can be overwritten, so wait for that first.
adopted() { dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci1 \
    org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Address > /dev/null 2>&1; }
wait_for 30 adopted || fail "bluetoothd did not adopt hci1"
for setting in "le on" "bondable on" "connectable on" "power on" "advertising on"; do
    # shellcheck disable=SC2086
    btmgmt -i hci1 $setting < /dev/null >> "$LOGS/btmgmt.log" 2>&1
done
# (btmgmt prints nothing when not on a terminal: ask bluetoothd over D-Bus instead. The scan
# below is what shows that hci1 advertises, connectable, from its public address.)
powered() { dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci1 \
    org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered 2>/dev/null | grep -q 'boolean true'; }
if wait_for 30 powered; then pass "bluetoothd runs hci1 ($peer), powered"; else fail "bluetoothd did not power hci1: $(cat "$LOGS/btmgmt.log")"; fi

timeout 60 "$BLUEJAY" scan --transport hci0 --duration 5 --json --capture "$ARTIFACTS/bluez-scan.btsnoop" > "$LOGS/scan.json" 2> "$LOGS/err"
sed 's/^/   /' "$LOGS/scan.json"
if grep "\"$peer\"" "$LOGS/scan.json" | grep -q '"connectable": true'; then pass "scan on hci0 finds BlueZ's hci1 ($peer), connectable"; else fail "scan did not find $peer: $(cat "$LOGS/err")"; fi

bluejay gatt "$peer/public" --transport hci0 --no-cache --capture "$ARTIFACTS/bluez-gatt.btsnoop"
echo "$OUT" | sed 's/^/   /'
if [ "$STATUS" = 0 ] && grep -q "^Service 1800 Generic Access" <<< "$OUT" && grep -q "^Service 1801 Generic Attribute" <<< "$OUT" \
    && grep -q "Characteristic 2A00 Device Name" <<< "$OUT"; then
    pass "gatt: connected and discovered BlueZ's database (GAP 1800, GATT 1801)"
else
    fail "gatt against BlueZ (status $STATUS): $ERR"
fi

bluejay read "$peer/public" 1800 2A00 --utf8 --transport hci0 --capture "$ARTIFACTS/bluez-read.btsnoop"
echo "   Device Name: $OUT"
if [ "$STATUS" = 0 ] && [ "$OUT" = "BlueZ peer" ]; then
    pass "read GAP Device Name (2A00) from BlueZ: \"$OUT\""
else
    fail "read Device Name (status $STATUS, got '$OUT'): $ERR"
fi
btmon -i hci1 -w "$ARTIFACTS/bluez-side.btsnoop" > /dev/null 2>&1 &
btmon_pid=$!
# Pairing with BlueZ: its kernel SMP as the peripheral, bluetoothd with a NoInputNoOutput
# agent (Just Works, accepted without a person). Then a new process reconnects and reads
# with the stored key: encryption, and no pairing in its capture. btmon records BlueZ's side.
# (bluetoothd still asks its agent to authorize a Just Works pairing; bluetoothctl prompts
# for it on stdin, so a "yes" goes in every half second: at the shell prompt it is just an
# unknown command.)
{ echo "agent NoInputNoOutput"; echo "default-agent"; for _ in $(seq 240); do sleep 0.5; echo yes; done; } \
    | bluetoothctl > "$LOGS/bluetoothctl.log" 2>&1 &
agent=$!
registered() { grep -q "Default agent request successful" "$LOGS/bluetoothctl.log"; }
wait_for 20 registered || echo "   (bluetoothctl did not confirm its agent: $(tail -n 3 "$LOGS/bluetoothctl.log"))"
bluejay pair "$peer/public" --io none --transport hci0 --json --capture "$ARTIFACTS/bluez-pair.btsnoop"
echo "   $OUT"
if [ "$STATUS" = 0 ] && grep -q '"secure_connections": true' <<< "$OUT"; then
    pass "paired with BlueZ (LE Secure Connections): $(sed 's/.*"method": "\([^"]*\)".*/\1/' <<< "$OUT")"
else
    fail "pairing with BlueZ (status $STATUS): $ERR"
fi
bluejay read "$peer/public" 1800 2A00 --utf8 --transport hci0 --capture "$ARTIFACTS/bluez-bonded-read.btsnoop"
smp=$("$BLUEJAY" trace "$ARTIFACTS/bluez-bonded-read.btsnoop" --summary --json | tr -d ' \n' | sed -n 's/.*"smp":{\([^}]*\)}.*/\1/p')
encrypted=$("$BLUEJAY" trace "$ARTIFACTS/bluez-bonded-read.btsnoop" | grep -c "Encryption_Change.*status 0x00")
# (BlueZ, bonded, sends a Security Request at once; answering it with the stored key is
# fine. What must not appear is a pairing: Pairing Request and what follows.)
if [ "$STATUS" = 0 ] && [ "$OUT" = "BlueZ peer" ] && ! grep -q "Pairing_Request" <<< "$smp" && [ "$encrypted" -ge 1 ]; then
    pass "a new process reconnects to BlueZ encrypted with the stored key, no pairing in its capture (SMP seen: ${smp:-none})"
else
    fail "bonded reconnection to BlueZ (status $STATUS, smp '$smp', encryption changes $encrypted): $ERR"
fi
kill $agent $btmon_pid 2>/dev/null
stop_bluetoothd

step "6. real BlueZ as the central: bluejay serve on hci0, bluetoothd + bluetoothctl on hci1"
# A fresh BlueZ (step 5's bond with hci0's address would make it encrypt with a key our
# peripheral never had), a store of the peripheral's own, and fresh emulated controllers:
# btvirt's kept state from the steps before let BlueZ's connection attempt be aborted
# ("le-connection-abort-by-local"; bluetoothd 5.66 then crashed), as it hid advertising
# from BlueZ's scan in make vmbench (Fixtures/vm/bench.sh).
rm -rf /var/lib/bluetooth/*
start_btvirt "$LOGS/btvirt.log" || fail "a new btvirt's hci0 and hci1 did not come up"
ours=$(address_of hci0)
BLUEJAY_STORE=$(mktemp -d) "$BLUEJAY" serve Fixtures/vm/bluez-central.json --transport hci0 \
    --capture "$ARTIFACTS/serve-bluez-central.btsnoop" > "$LOGS/serve.log" 2> "$LOGS/serve.err" &
serve=$!
if wait_for 60 grep -q '^advertising as Bluejay VM' "$LOGS/serve.log"; then
    pass "bluejay serve on hci0 ($ours): $(head -n 1 "$LOGS/serve.log")"
else
    fail "bluejay serve did not start advertising: $(cat "$LOGS/serve.err")"
fi
start_bluetoothd -f /tmp/main.conf
wait_for 30 adopted || fail "bluetoothd did not adopt hci1"
ctl_start "$LOGS/bluetoothctl-central.log"
# What each step prints, checked: bluetoothctl says what it did in words.
central_step() {  # SECONDS REGEX DESCRIPTION COMMAND…
    local seconds=$1 pattern=$2 what=$3
    shift 3
    ctl "$@"
    if ctl_wait "$seconds" "$pattern"; then pass "bluetoothctl $what"; else
        fail "bluetoothctl $what: no /$pattern/ after '$*'; it printed:"; ctl_output | tail -n 15 | sed 's/^/   | /'
        return 1
    fi
}
ctl_wait 20 "Agent registered" || true
central_step 10 "Changing power on succeeded" "powers hci1 on" power on
central_step 60 "Device $ours Bluejay VM" "finds our advertisement ($ours, 'Bluejay VM')" scan on
ctl scan off
if central_step 60 "Connection successful" "connects to us" connect "$ours"; then
    wait_for 20 grep -q "^connected $(address_of hci1)" "$LOGS/serve.log" && pass "our peripheral saw BlueZ's hci1 connect" \
        || fail "serve printed no connection from hci1"
    ctl_wait 60 "ServicesResolved: yes" || fail "BlueZ did not finish discovering our database"
    central_step 20 "b1e70b02-9d3b-4c7a-8a5e-6f2d0c1b0a00" "lists our GATT database" gatt.list-attributes "$ours"
    ctl_output > "$LOGS/bluez-attributes.txt"
    grep -aE "^(Primary Service|Characteristic|Descriptor)|^\s+[0-9a-f]{8}-" "$LOGS/bluez-attributes.txt" | paste - - | sed 's/^/   | /'
    grep -q "0000181a-0000-1000-8000-00805f9b34fb" "$LOGS/bluez-attributes.txt" && grep -qi "Environmental Sensing" "$LOGS/bluez-attributes.txt" \
        && pass "BlueZ lists our service 181A (Environmental Sensing)" || fail "service 181A not among BlueZ's attributes"
    central_step 10 "Selected|\\[.*char[0-9a-f]{4}\\]" "selects our readable characteristic" gatt.select-attribute b1e70b01-9d3b-4c7a-8a5e-6f2d0c1b0a00
    central_step 20 "hello, BlueZ" "reads our value \"hello, BlueZ\"" gatt.read
    ctl gatt.select-attribute 00002a6e-0000-1000-8000-00805f9b34fb
    sleep 0.2  # (selection is local to bluetoothctl; nothing is printed to wait for)
    central_step 20 "Notify started" "turns notifications on (2A6E)" gatt.notify on
    wait_for 10 grep -q "2A6E: notifications on" "$LOGS/serve.log" && pass "our peripheral saw BlueZ subscribe" || fail "serve saw no subscription"
    # Our timer sends 0a09 then 0b09, every 0.25 s: both must arrive, as values.
    if ctl_wait 20 "0a 09" && ctl_wait 20 "0b 09"; then
        pass "bluetoothctl received our notifications: $(ctl_output | grep -ac 'Value:') values, 0a09 and 0b09 among them"
    else
        fail "notifications did not reach bluetoothctl: $(ctl_output | tail -n 5)"
    fi
    ctl gatt.notify off
    if ctl_pair "$ours"; then pass "bluetoothctl pairs with us (LE Secure Connections, Just Works; we are the responder)"; else
        fail "bluetoothctl pair: $(ctl_output | tail -n 8)"
    fi
    central_step 10 "Paired: yes" "shows us paired" info "$ours"
    ctl gatt.select-attribute b1e70b02-9d3b-4c7a-8a5e-6f2d0c1b0a00
    sleep 0.2
    central_step 20 "sealed by LESC" "reads our encrypted-only value on the paired link" gatt.read
    central_step 20 "Successful disconnected|Connected: no" "disconnects" disconnect "$ours"
fi
ctl_stop
kill -INT $serve 2>/dev/null
wait $serve
stop_bluetoothd

# The BlueZ peer's kernel SMP needs ECDH P-256 (pairing, once ours lands): no crypto gaps.
if dmesg | grep -qE 'Unable to create ECDH|self-tests for .* failed'; then
    fail "the guest kernel's crypto: $(dmesg | grep -E 'Unable to create ECDH|self-tests for .* failed' | head -n 2)"
else
    pass "the guest kernel has ECDH P-256 for the BlueZ peer's SMP"
fi
stop "$BTVIRT"
cp "$LOGS"/* "$ARTIFACTS"/ 2>/dev/null
echo
echo "vmtest: $passed passed, $failed failed"
[ $failed = 0 ]
