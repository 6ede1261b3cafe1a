#!/usr/bin/env bash
# `make gateway-demo`: the gateway against the bundled virtual peripherals and a local broker.
#
#   Fixtures/gateway/demo.sh PEER_PYTHON GATEWAY
#
# Starts, in a scratch folder that goes when it ends:
# - the Bumble peer (Fixtures/peer/peer.py) with its connectable heart-rate sensor and three
#   sensors that only advertise (--advertisers 3: BTHome v2, ATC in the pvvx format, RuuviTag);
# - mosquitto on a free loopback port;
# - mosquitto_sub on `bluejay/#`, whose lines it shows as they come;
# - the gateway (GATEWAY), scanning passively, decoding what it hears.
# It ends, exit status 0, once decoded values of each kind of device (two readings of each
# thermometer, and the heart rate) have arrived on MQTT
# (1 if they have not after DEMO_HANG_GUARD seconds, 120: a hang guard, not a speed check).
# FOLLOW=1 keeps it running until Ctrl-C.
set -euo pipefail

python=$1
gateway=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
hang_guard=${DEMO_HANG_GUARD:-120}
work=$(mktemp -d)
pids=()

cleanup() {
    # The gateway first (it marks its topics offline on the broker), then the rest.
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_until TEST: until TEST succeeds, or the hang guard.
wait_until() {
    local deadline=$((SECONDS + hang_guard))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

fail() {
    echo "gateway-demo: $1" >&2
    for log in peer.log mosquitto.log gateway.log; do
        [ -s "$work/$log" ] && { echo "== $log (last lines)" >&2; tail -n 20 "$work/$log" >&2; }
    done
    exit 1
}

# The peer: one connectable heart-rate sensor, three advertising thermometers.
"$python" "$root/Fixtures/peer/peer.py" --heart-rate-on-subscribe --advertisers 3 >"$work/peer.out" 2>"$work/peer.log" &
pids+=($!)
wait_until grep -q '^READY' "$work/peer.out" || fail "the peer did not start"
ready=$(head -n 1 "$work/peer.out")
transport=$(sed -n 's/^READY transport=\([^ ]*\).*/\1/p' <<<"$ready")
address=$(sed -n 's/.* address=\([^ ]*\).*/\1/p' <<<"$ready")
first=$(sed -n 's/.* advertiser=\([^ ]*\).*/\1/p' <<<"$ready")
echo "== peer: heart-rate sensor $address (connectable), thermometers from $first (advertising only), on $transport"

# The broker, on a free port.
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{
    echo "listener $port 127.0.0.1"
    echo "allow_anonymous true"
    echo "log_dest file $work/mosquitto.log"
    [ "$(id -u)" = 0 ] && echo "user root"  # as root it would drop to a user who cannot write here
} >"$work/mosquitto.conf"
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
"$mosquitto" -c "$work/mosquitto.conf" >/dev/null 2>&1 &
pids+=($!)
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
wait_until accepts || fail "mosquitto did not start on port $port"
echo "== mosquitto on 127.0.0.1:$port"

mosquitto_sub -h 127.0.0.1 -p "$port" -v -t 'bluejay/#' >"$work/mqtt.log" 2>&1 &
pids+=($!)

cat >"$work/gateway.yaml" <<EOF
gateway: demo
transport: $transport
broker: mqtt://127.0.0.1:$port
scan: passive          # the thermometers only broadcast; nothing needs their scan responses
rate_limit: 2s         # each device's values at most every 2 s
homeassistant: off
stats_every: 10s
peripherals:
  - address: $address/random
    subscribe:
      - {service: 180D, characteristic: 2A37}
    poll:
      - {service: 180F, characteristic: 2A19, every: 5s}
EOF
echo "== bluejay-gateway $work/gateway.yaml"
sed 's/^/   /' "$work/gateway.yaml"
BLUEJAY_STORE="$work/store" "$gateway" "$work/gateway.yaml" 2>"$work/gateway.log" &
gateway_pid=$!
pids=("$gateway_pid" "${pids[@]}")
echo "== mosquitto_sub -v -t 'bluejay/#'"

# Shows the broker's lines as they come; done once each kind of device has been heard.
shown=0
show_new_lines() {
    local total
    total=$(wc -l <"$work/mqtt.log")
    if [ "$total" -gt "$shown" ]; then
        sed -n "$((shown + 1)),${total}p" "$work/mqtt.log" | grep -v '/stats ' || true
        shown=$total
    fi
}
# Two readings of each thermometer (the values move), and the heart rate, among the lines shown.
heard_each() {
    show_new_lines
    kill -0 "$gateway_pid" 2>/dev/null || fail "the gateway exited"
    local lines
    lines=$(head -n "$shown" "$work/mqtt.log")
    for format in bthome-v2 pvvx ruuvi-v5; do
        [ "$(grep -c "\"format\":\"$format\"" <<<"$lines")" -ge 2 ] || return 1
    done
    grep -q '/180D/2A37/json {"heart_rate"' <<<"$lines"
}
wait_until heard_each || fail "not every kind of device was heard within ${hang_guard} s"

echo "== heard each kind of device:"
for pattern in '"format":"bthome-v2"' '"format":"pvvx"' '"format":"ruuvi-v5"' '/180D/2A37/json '; do
    echo "   $(grep -F "$pattern" "$work/mqtt.log" | tail -n 1)"
done
if [ "${FOLLOW:-}" = 1 ]; then
    echo "== FOLLOW=1: running until Ctrl-C"
    while kill -0 "$gateway_pid" 2>/dev/null; do
        show_new_lines
        sleep 0.5
    done
    fail "the gateway exited"
fi
