#!/usr/bin/env python3
"""Side-by-side benchmarks for `make bench`.

Each pair of commands does the same job and runs interleaved in one process, so the
ratios hold on a noisy machine even when the absolute times do not. For every command:
median wall time over N runs and peak resident memory (ru_maxrss from wait4).

  trace summary  bluejay trace --summary --json (all shared traces)  vs  tshark -r -q (full dissection)
  trace decode   bluejay trace (readable lines)                      vs  tshark -r (one line per frame)
  bring-up       bluejay info against the Bumble peer                vs  bumble-controller-info (Bumble's Python host)
  reconnect      bluejay read of one characteristic with the discovery cache (warm), bonded (the
                 `cached` figures: no Database Hash read) and unbonded (`cached_unbonded`), vs
                 --no-cache: ATT requests before the value arrived, and the time to it (from the
                 captures' btsnoop timestamps, and the whole process's wall time), p50/p95 over
                 >= 20 connections
  receive        bluejay-bench receive vs Fixtures/bench/bumble_receive.py on the same H4 bytes
  send           bluejay-bench send: host CPU per Write Command, idle buffers while queued
  allocations    heap allocations of the same paths, from the package-benchmark suite
                 (Benchmarks/BluejayBenchmarks, run by `make bench` just before)
  app's path     the same notifications to Bluejay.listen (Data, main actor), to Central's values(of:)
                 and through `bluejay listen` to /dev/null, and the receive path fed one packet per read
                 on a SOCK_SEQPACKET pair as the user channel feeds it; interleaved with the GATT-layer
                 figure, each as a ratio to it (issue 33's goals)
  end to end     notifications/s of the peer's flood through bluejay listen
  l2cap vs gatt  the same octets echoed on one link over an L2CAP credit-based channel and over
                 GATT Write Command + notification (bluejay-bench l2cap), as a ratio
  footprint      the stripped static binary (`make static`) by component; peak RSS of its
                 listen, flooded and idle, by cause (Fixtures/bench/footprint.py)
  goals          issue 25's: binary size, listen's peak RSS, the cached reconnect's round trips

Everything lands in bench/results.json (machine, date, commit, each figure's median/min/max).
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import footprint as footprint_report
from gateway_bench import gateway_bench
import peripheral as peripheral_report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = sorted(glob.glob(os.path.join(os.path.dirname(ROOT), 'shared', 'traces', '*.btsnoop')))


def measure(argv):
    """Runs argv once; returns (seconds, max RSS in KiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f'benchmark command failed ({status}): {" ".join(argv)}')
    return elapsed, usage.ru_maxrss


def compare(title, ours, theirs, runs):
    """Interleaves the two commands `runs` times and prints medians and ratios."""
    a, b = [], []
    for _ in range(runs):
        a.append(measure(ours[1]))
        b.append(measure(theirs[1]))
    ta, tb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    ma, mb = max(x[1] for x in a), max(x[1] for x in b)
    print(f'{title}  ({runs} runs each, interleaved)')
    print(f'  {ours[0]:<28} {ta * 1000:9.1f} ms  {ma / 1024:7.1f} MiB')
    print(f'  {theirs[0]:<28} {tb * 1000:9.1f} ms  {mb / 1024:7.1f} MiB')
    print(f'  ratio: {tb / ta:.1f}x faster, {mb / ma:.1f}x less memory')
    print()
    return {'ours': spread([x[0] * 1000 for x in a]), 'theirs': spread([x[0] * 1000 for x in b]),
            'ours_peak_rss_bytes': ma * 1024, 'theirs_peak_rss_bytes': mb * 1024}


def spread(values):
    """median/min/max (and the runs) of a list of figures."""
    return {'median': statistics.median(values), 'min': min(values), 'max': max(values), 'runs': list(values)}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def start_peer(*arguments):
    peer = subprocess.Popen([os.path.join(ROOT, '.venv/bin/python'), os.path.join(ROOT, 'Fixtures/peer/peer.py'), *arguments],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = peer.stdout.readline()
    if not line.startswith('READY '):
        peer.terminate()
        sys.exit(f'the peer did not start: {line!r}')
    fields = dict(part.split('=', 1) for part in line.split()[1:] if '=' in part)
    return peer, fields['transport'], fields['address']


CUSTOM_SERVICE = 'B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00'
READ_ONLY = 'B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00'
READ_ONLY_VALUE = b'Bluejay read-only'
# ATT requests (each waits for its response: one round trip). Commands, notifications and
# indications are not requests.
ATT_REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}
ATT_DISCOVERY = {0x04, 0x06, 0x10}  # Find Information, Find By Type Value, Read By Group Type


def att_pdus(path):
    """The ATT PDUs of a btsnoop file (datalink 1002, H4): (timestamp in µs, sent by the
    host, PDU bytes), rebuilt from ACL fragments per connection handle and direction."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'btsnoop\0' or struct.unpack_from('>I', data, 12)[0] != 1002:
        sys.exit(f'{path}: not an H4 btsnoop file')
    offset, pending, pdus = 16, {}, []
    while offset + 24 <= len(data):
        _, length, flags, _, timestamp = struct.unpack_from('>IIIIq', data, offset)
        packet = data[offset + 24:offset + 24 + length]
        offset += 24 + length
        if len(packet) < 5 or packet[0] != 0x02:
            continue
        sent = flags & 1 == 0
        handle_flags, size = struct.unpack_from('<HH', packet, 1)
        key = (handle_flags & 0x0FFF, sent)
        fragment = packet[5:5 + size]
        if handle_flags >> 12 & 3 == 1:      # continuation
            if key not in pending:
                continue
            pending[key] += fragment
        else:                                # start (0b00 or 0b10)
            pending[key] = bytearray(fragment)
        frame = pending[key]
        if len(frame) >= 4 and len(frame) >= 4 + struct.unpack_from('<H', frame, 0)[0]:
            del pending[key]
            total, cid = struct.unpack_from('<HH', frame, 0)
            if cid == 4 and total > 0:
                pdus.append((timestamp, sent, bytes(frame[4:4 + total])))
    return pdus


def create_connection_time(path):
    """The btsnoop timestamp (µs) of the host's LE (Extended) Create Connection."""
    with open(path, 'rb') as f:
        data = f.read()
    offset = 16
    while offset + 24 <= len(data):
        _, length, flags, _, timestamp = struct.unpack_from('>IIIIq', data, offset)
        packet = data[offset + 24:offset + 24 + length]
        offset += 24 + length
        if len(packet) >= 3 and packet[0] == 0x01 and struct.unpack_from('<H', packet, 1)[0] in (0x200D, 0x2043):
            return timestamp
    sys.exit(f'{path}: no LE Create Connection')


def until_value(path):
    """(ATT requests sent, of which Exchange MTU, discovery requests, µs from the first ATT
    PDU to the Read Response carrying the value, µs from LE Create Connection to it) up to
    that response."""
    pdus = att_pdus(path)
    requests = mtu = discovery = 0
    for timestamp, sent, pdu in pdus:
        if sent and pdu[0] in ATT_REQUESTS:
            requests += 1
            mtu += pdu[0] == 0x02
            discovery += pdu[0] in ATT_DISCOVERY or (
                pdu[0] == 0x08 and pdu[5:] in (b'\x00\x28', b'\x01\x28', b'\x02\x28', b'\x03\x28'))
        if not sent and pdu[0] == 0x0B and pdu[1:] == READ_ONLY_VALUE:
            return requests, mtu, discovery, timestamp - pdus[0][0], timestamp - create_connection_time(path)
    sys.exit(f'{path}: no Read Response with the value')


def reconnect(bluejay, transport, address, runs):
    """bluejay read with a warm discovery cache, bonded and not, vs --no-cache, interleaved.

    Bonded: a store that paired once (`bluejay pair`), then one warm-up read, which checks the
    Database Hash and subscribes to Service Changed on the bonded link; every later read
    trusts the cache without the hash (the peer keeps the subscription and would indicate a
    change on reconnection). Unbonded: another store, no bond: the hash is read every time.
    --no-cache runs on the unbonded store."""
    work = tempfile.mkdtemp(prefix='bluejay-bench-')
    stores = {'bonded': os.path.join(work, 'bonded'), 'unbonded': os.path.join(work, 'unbonded')}
    cases = (('cached', 'bonded, warm cache', 'bonded', False),
             ('cached_unbonded', 'unbonded, warm cache', 'unbonded', False),
             ('uncached', '--no-cache', 'unbonded', True))

    def run(argv, store):
        env = dict(os.environ, BLUEJAY_STORE=stores[store])
        env.pop('BLUEJAY_BTSNOOP', None)
        start = time.perf_counter()
        result = subprocess.run(argv, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f'benchmark command failed ({result.returncode}): {" ".join(argv)}\n{result.stderr}')
        return elapsed, result

    def read(store, no_cache, capture):
        argv = [bluejay, 'read', f'{address}/random', CUSTOM_SERVICE, READ_ONLY, '--transport', transport,
                '--capture', capture] + (['--no-cache'] if no_cache else [])
        elapsed, result = run(argv, store)
        if 'Bluejay read-only' not in result.stdout:
            sys.exit(f'benchmark command printed no value: {" ".join(argv)}\n{result.stdout}{result.stderr}')
        return elapsed, until_value(capture)

    try:
        run([bluejay, 'pair', f'{address}/random', '--transport', transport], 'bonded')
        for store in stores:
            read(store, False, os.path.join(work, f'warm-up-{store}.btsnoop'))  # fills the cache
        results = {key: [] for key, *_ in cases}
        for index in range(runs):
            for key, _, store, no_cache in cases:
                capture = os.path.join(work, f'{index}-{key}.btsnoop')
                results[key].append(read(store, no_cache, capture))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = {}
    for key, label, _, _ in cases:
        counts = {(r[1][0], r[1][1], r[1][2]) for r in results[key]}
        if len(counts) != 1:
            print(f'  note: {label}: the request counts varied between runs: {sorted(counts)}')
        requests, mtu, discovery = max(counts)
        air = [r[1][3] / 1000 for r in results[key]]
        wall = [r[0] * 1000 for r in results[key]]
        rows[key] = (label, requests, requests - mtu, discovery, statistics.median(air), min(air), max(air),
                     statistics.median(wall))
    for key in ('cached', 'cached_unbonded'):
        if rows[key][3]:
            print(f'  note: {rows[key][0]}: {rows[key][3]} discovery requests (expected none)')
    print(f'reconnect: bluejay read {address} <custom service> B1E70008… against the Bumble peer '
          f'({runs} connections each, interleaved, after one warm-up run per store that filled the cache)')
    print(f'  {"":<22} {"ATT round trips to the value":>29} {"1st ATT PDU -> value (capture)":>31} {"process wall time":>18}')
    print(f'  {"":<22} {"with MTU xchg / without":>29} {"median (min-max)":>31} {"median":>18}')
    for key, *_ in cases:
        label, requests, without, _, median_air, low, high, wall = rows[key]
        air = f'{median_air:.2f} ms ({low:.2f}-{high:.2f})'
        print(f'  {label:<22} {f"{requests} / {without}":>29} {air:>31} {f"{wall:.1f} ms":>18}')
    cached, uncached = rows['cached'], rows['uncached']
    print(f'  {"ratio (no-cache/bonded)":<22} {f"{uncached[1] / cached[1]:.1f}x / {uncached[2] / cached[2]:.1f}x":>29} '
          f'{f"{uncached[4] / cached[4]:.1f}x":>31} {f"{uncached[7] / cached[7]:.2f}x":>18}')
    goal = 'met' if cached[1] <= 2 else 'NOT met'
    print(f'  goal: a bonded reconnection reads its first value in <= 2 ATT round trips: {cached[1]} ({goal}); '
          f'unbonded {rows["cached_unbonded"][1]} (the Database Hash read), --no-cache {uncached[1]}')
    print('  The capture figure runs from the first ATT PDU (Exchange MTU) to the Read Response with the value, by the')
    print('  btsnoop timestamps bluejay writes: the better measure of what the cache saves. The wall time also includes')
    print('  process start, controller bring-up over TCP, scan-free connection set-up, the bonded runs\' encryption and')
    print('  the disconnect, which the cache does not change.')
    print()
    figures = {}
    for key, *_ in cases:
        air = [r[1][3] / 1000 for r in results[key]]
        connect = [r[1][4] / 1000 for r in results[key]]
        figures[key] = {'round_trips': rows[key][1], 'round_trips_without_mtu': rows[key][2],
                        'ms': {'p50': percentile(connect, 0.5), 'p95': percentile(connect, 0.95), 'min': min(connect), 'max': max(connect), 'runs': connect},
                        'att_ms': {'p50': percentile(air, 0.5), 'p95': percentile(air, 0.95), 'runs': air},
                        'process_ms': {'p50': percentile([r[0] * 1000 for r in results[key]], 0.5)}}
    figures['cached']['bonded'] = True
    figures['cached']['case'] = 'bonded, subscribed to Service Changed, warm discovery cache'
    figures['cached']['goal_round_trips'] = 2
    c, b, u = figures['cached']['ms'], figures['cached_unbonded']['ms'], figures['uncached']['ms']
    print(f'  connect -> value (LE Create Connection to the Read Response, capture): bonded p50 {c["p50"]:.2f} ms p95 {c["p95"]:.2f} ms; '
          f'unbonded p50 {b["p50"]:.2f} ms p95 {b["p95"]:.2f} ms; --no-cache p50 {u["p50"]:.2f} ms p95 {u["p95"]:.2f} ms')
    print()
    return figures


def bench_json(argv):
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f'benchmark command failed ({result.returncode}): {" ".join(argv)}\n{result.stderr}')
    return json.loads(result.stdout)


def receive(bench, runs, count):
    """The receive path in memory: bluejay-bench and Bumble's host fed the same H4 bytes."""
    work = tempfile.mkdtemp(prefix='bluejay-bench-')
    figures = {}
    try:
        for payload in (244, 20):
            stream = os.path.join(work, f'notifications-{payload}.h4')
            ours = bench_json([bench, 'receive', '--payload', str(payload), '--count', str(count), '--runs', str(runs),
                               '--write-stream', stream])
            theirs = bench_json([os.path.join(ROOT, '.venv/bin/python'), os.path.join(ROOT, 'Fixtures/bench/bumble_receive.py'),
                                 stream, '--runs', str(runs), '--json'])
            figures[payload] = (ours, theirs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f'receive path in memory: {count} ATT notifications as H4 bytes -> HCI -> L2CAP -> ATT -> GATT listener -> a Receivable '
          f'({runs} runs each)')
    print(f'  {"payload":<9} {"bluejay /s (wall)":>19} {"bluejay /s (CPU)":>18} {"Bumble /s":>11} {"ratio":>7}')
    for payload, (ours, theirs) in figures.items():
        print(f'  {payload:<9} {ours["notifications_per_s"]["median"]:>19,.0f} {ours["notifications_per_cpu_s"]["median"]:>18,.0f} '
              f'{theirs["median"]:>11,.0f} {ours["notifications_per_s"]["median"] / theirs["median"]:>6.1f}x')
    print('  bluejay: framing on a reader thread, the stack on its actor (two threads: "CPU" divides by the CPU time of both).')
    print('  Bumble: its stock host path with its eager debug formatting patched out (see bumble_receive.py), one thread.')
    print()
    return figures


BASELINE_MODES = ('receive', 'seqpacket', 'bluejay-listen', 'central-values')


def against_baseline(bench, baseline, runs, count):
    """The receive path and the app paths (seqpacket, bluejay-listen, central-values) of this
    build and of an earlier one (`make bench BENCH_BASELINE=REV`), one process each in turn,
    mode by mode, so the ratios hold however loaded the machine is. A mode the baseline does
    not have is left out of its comparison and said so."""
    figures = {mode: ([], []) for mode in BASELINE_MODES}
    missing = set()
    for _ in range(runs):
        for mode in BASELINE_MODES:
            for binary, side in ((bench, 0), (baseline, 1)):
                if side == 1 and mode in missing:
                    continue
                argv = [binary, mode, '--payload', '244', '--count', str(count), '--runs', '1']
                if side == 1 and mode != 'receive':
                    result = subprocess.run(argv, capture_output=True, text=True)
                    if result.returncode != 0:
                        missing.add(mode)
                        continue
                    figures[mode][side].append(json.loads(result.stdout.strip().splitlines()[-1]))
                else:
                    figures[mode][side].append(bench_json(argv))
    def median(values):
        return statistics.median(f['notifications_per_cpu_s']['median'] for f in values)
    ours, theirs = figures['receive']
    result = {'notifications_per_cpu_s': median(ours), 'baseline_notifications_per_cpu_s': median(theirs)}
    result['ratio'] = result['notifications_per_cpu_s'] / result['baseline_notifications_per_cpu_s']
    # The baseline's checkout is three levels above its binary (CHECKOUT/.build/release/bluejay-bench).
    result['baseline_commit'] = commit(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(baseline)))))
    result['modes'] = {}
    print(f'receive and app paths against the baseline {(result["baseline_commit"] or "?")[:10]} '
          f'(244-byte notifications, {runs} runs each, interleaved; notifications per CPU-second)')
    print(f'  {"path":<16} {"this build":>12} {"baseline":>12} {"ratio":>7}')
    for mode in BASELINE_MODES:
        ours, theirs = figures[mode]
        if mode in missing or not theirs:
            print(f'  {mode:<16} {median(ours):>12,.0f} {"(none)":>12}')
            continue
        entry = {'per_cpu_s': median(ours), 'baseline_per_cpu_s': median(theirs)}
        entry['ratio'] = entry['per_cpu_s'] / entry['baseline_per_cpu_s']
        result['modes'][mode] = entry
        print(f'  {mode:<16} {entry["per_cpu_s"]:>12,.0f} {entry["baseline_per_cpu_s"]:>12,.0f} {entry["ratio"]:>6.2f}x')
    print()
    return result


def send(bench, runs, count):
    """Write Commands of 244 bytes: host CPU per packet, and whether buffers sat idle."""
    result = bench_json([bench, 'send', '--payload', '244', '--count', str(count), '--runs', str(runs)])
    print(f'send path in memory: {count} Write Commands of 244 bytes -> GATT -> ATT -> L2CAP -> ACL queue ({runs} runs)')
    print(f'  host CPU per packet: {result["host_us_per_packet"]["median"]:.2f} µs median '
          f'({result["host_us_per_packet"]["min"]:.2f}-{result["host_us_per_packet"]["max"]:.2f}); '
          f'a controller buffer sat free while packets were queued: {result["buffer_idle_while_queued"]} times')
    print()
    return result


def flood(bluejay, transport, address, count):
    """Notifications/s from the peer's flood (this measures the peer as much as us)."""
    work = tempfile.mkdtemp(prefix='bluejay-bench-')
    capture = os.path.join(work, 'flood.btsnoop')
    try:
        argv = [bluejay, 'listen', f'{address}/random', '--handle', '0x002B', '--count', str(count), '--transport', transport,
                '--capture', capture, '--write', '0x0029=01' + struct.pack('<IH', count, 244).hex()]
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, BLUEJAY_STORE=os.path.join(work, 'store')))
        if result.returncode != 0:
            sys.exit(f'flood failed: {result.stderr}')
        times = [t for t, sent, pdu in att_pdus(capture) if not sent and pdu[0] == 0x1B]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rate = (len(times) - 1) / ((times[-1] - times[0]) / 1e6)
    print(f'end to end: the peer floods {count} notifications of 244 bytes; bluejay listen received {len(times)} '
          f'at {rate:,.0f}/s (capture timestamps).')
    print('  bluejay listen prints every value as it comes, and the capture logs a packet when the stack takes it,')
    print('  at most 8 reads ahead of the printing: this is listen\'s own pace, end to end. (Before the backlog was')
    print('  cut from 64 reads to 8, 20000 notifications fitted in it and the capture ran ahead: 147,216/s then.)')
    print()
    return {'notifications': len(times), 'per_s': rate}


FLOOD_PERIPHERAL = 'F0:0D:B1:E7:00:07/random'  # BenchSupport's FloodPeripheral
# Issue 33's goals for the app's path, against the GATT-layer figure of the same run.
APP_GOALS = {'ratio_to_gatt_layer': 0.5, 'cli_listen_per_s': 300_000, 'allocations_per_value': 2}


def app_paths(bench, bluejay, static, runs, count, allocations):
    """The receive path as the app meets it (issue 33), interleaved run by run with the
    GATT-layer figure (`bluejay-bench receive`, ReceivePath), one process per figure and run:

      seqpacket       ReceivePath's layers on the user channel's transport, fed one packet per
                      read through a SOCK_SEQPACKET socket pair (the writer thread, standing for
                      the kernel, is left out of the CPU figure)
      bluejay-listen  a whole Bluejay over the virtual controller: listen(to:) delivering Data
                      to a callback on the main actor
      central-values  Central's values(of:) read with for-try-await on the stack's actor
      bluejay listen  the release binary (and the static one) against `bluejay-bench flood-peer`
                      on a Unix socket, stdout to /dev/null: values/s from the flood's start
                      to the CCCD write that turns it off once the Nth value is printed

    Every path brings a controller up, connects, discovers and subscribes before the flood is
    let go; only the flood is timed. The same 244-byte notifications as the receive figure."""
    work = tempfile.mkdtemp(prefix='bluejay-bench-app-')
    socket_path = os.path.join(work, 'flood.sock')
    peer = subprocess.Popen([bench, 'flood-peer', '--socket', socket_path, '--count', str(count), '--payload', '244'],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    in_process = ('receive', 'seqpacket', 'bluejay-listen', 'central-values')
    clis = {'cli': bluejay, 'cli_static': static}
    wall = {key: [] for key in (*in_process, *clis)}
    cpu = {key: [] for key in in_process}
    threads = {key: [] for key in in_process}
    process = {key: [] for key in clis}
    try:
        line = peer.stdout.readline()
        if not line.startswith('READY '):
            sys.exit(f'bluejay-bench flood-peer did not start: {line!r}')
        for _ in range(runs):
            for mode in in_process:
                figure = bench_json([bench, mode, '--payload', '244', '--count', str(count), '--runs', '1'])
                wall[mode].append(figure['notifications_per_s']['median'])
                cpu[mode].append(figure['notifications_per_cpu_s']['median'])
                if 'threads' in figure:
                    threads[mode].append(figure['threads'])
            for key, binary in clis.items():
                argv = [binary, 'listen', FLOOD_PERIPHERAL, '--handle', '0x002B', '--count', str(count),
                        '--transport', f'unix:{socket_path}']
                start = time.perf_counter()
                result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        env=dict(os.environ, BLUEJAY_STORE=os.path.join(work, 'store')))
                elapsed = time.perf_counter() - start
                if result.returncode != 0:
                    sys.exit(f'benchmark command failed ({result.returncode}): {" ".join(argv)}\n{result.stderr}')
                served = json.loads(peer.stdout.readline())
                if 'per_s' not in served:
                    sys.exit(f'flood-peer could not time {" ".join(argv)}: {served}')
                wall[key].append(served['per_s'])
                process[key].append(count / elapsed)
    finally:
        peer.terminate()
        peer.wait()
        shutil.rmtree(work, ignore_errors=True)

    median = {key: statistics.median(values) for key, values in wall.items()}
    gatt = median['receive']
    result = {'notifications': count, 'payload': 244, 'runs': runs,
              'gatt_layer_per_s': spread(wall['receive']), 'gatt_layer_per_cpu_s': spread(cpu['receive']),
              'bluejay_listen_per_s': spread(wall['bluejay-listen']), 'bluejay_listen_per_cpu_s': spread(cpu['bluejay-listen']),
              'central_values_per_s': spread(wall['central-values']), 'central_values_per_cpu_s': spread(cpu['central-values']),
              'cli_listen_per_s': spread(wall['cli']), 'cli_listen_process_per_s': spread(process['cli']),
              'cli_listen_static_per_s': spread(wall['cli_static']), 'cli_listen_static_process_per_s': spread(process['cli_static']),
              'allocations_per_value': allocations.get('bluejay_listen_244_per_value'),
              'central_allocations_per_value': allocations.get('central_values_244_per_value'),
              'ratios': {key: median[mode] / gatt for key, mode in (('seqpacket', 'seqpacket'), ('bluejay_listen', 'bluejay-listen'),
                                                                      ('central_values', 'central-values'), ('cli_listen', 'cli'),
                                                                      ('cli_listen_static', 'cli_static'))}}
    seqpacket = {'per_s': spread(wall['seqpacket']), 'per_cpu_s': spread(cpu['seqpacket']),
                 'threads': max(threads['seqpacket']) if threads['seqpacket'] else None}
    half = APP_GOALS['ratio_to_gatt_layer']
    goals = {key: {'goal': f'>= {half} x the GATT-layer figure', 'measured': result['ratios'][key],
                   'met': result['ratios'][key] >= half} for key in ('bluejay_listen', 'central_values', 'cli_listen')}
    goals['cli_listen_per_s'] = {'goal': APP_GOALS['cli_listen_per_s'], 'measured': median['cli'],
                                 'met': median['cli'] >= APP_GOALS['cli_listen_per_s']}
    measured_allocations = result['allocations_per_value']
    goals['allocations_per_value'] = {'goal': APP_GOALS['allocations_per_value'], 'measured': measured_allocations,
                                      'met': None if measured_allocations is None else measured_allocations <= APP_GOALS['allocations_per_value']}
    result['goals'] = goals

    def verdict(key):
        return {True: 'met', False: 'missed', None: 'not measured'}[goals[key]['met']]

    print(f'the app\'s path: {count} notifications of 244 bytes, {runs} runs each, interleaved with the GATT-layer figure '
          '(one process per figure and run; set-up untimed)')
    print(f'  {"path":<58} {"/s (wall)":>11} {"/s (CPU)":>10} {"x GATT":>7}  goal')
    rows = (('GATT layer: H4 bytes -> GATT value listener (receive)', 'receive', None),
            ('user channel\'s way: SOCK_SEQPACKET, one packet per read', 'seqpacket', None),
            ('Bluejay.listen -> ReadResult<Data> callback (main actor)', 'bluejay-listen', 'bluejay_listen'),
            ('Central values(of:), for try await (stack\'s actor)', 'central-values', 'central_values'),
            ('bluejay listen > /dev/null (release, unix: socket)', 'cli', 'cli_listen'),
            ('bluejay listen > /dev/null (static binary)', 'cli_static', None))
    for label, key, goal in rows:
        cpu_text = f'{statistics.median(cpu[key]):>10,.0f}' if key in cpu else f'{"":>10}'
        goal_text = f'>= {half:.2f}: {verdict(goal)}' if goal else ''
        if key == 'cli':
            goal_text += f'; >= {APP_GOALS["cli_listen_per_s"]:,}/s: {verdict("cli_listen_per_s")}'
        print(f'  {label:<58} {median[key]:>11,.0f} {cpu_text} {median[key] / gatt:>6.2f}x  {goal_text}')

    def per_value(figure):
        return 'not measured' if figure is None else f'{figure:.2f}'
    print(f'  heap allocations per value, Bluejay.listen delivering Data (package-benchmark): {per_value(measured_allocations)}'
          f' (goal <= {APP_GOALS["allocations_per_value"]}: {verdict("allocations_per_value")}); Central values(of:): '
          f'{per_value(result["central_allocations_per_value"])}')
    print(f'  the CLI\'s whole process (start, bring-up, connection, flood, exit): {statistics.median(process["cli"]):,.0f}/s release, '
          f'{statistics.median(process["cli_static"]):,.0f}/s static')
    print('  Ratios are to the GATT-layer figure of these same interleaved runs. "CPU" divides by the process\'s CPU time')
    print('  (seqpacket: without the writer thread, which stands for the kernel).')
    if seqpacket['threads'] is not None:
        print(f'  threads of the seqpacket process at the flood\'s end: {seqpacket["threads"]} (the writer thread among them)')
    print()
    return result, seqpacket


def stalled_consumer(bench, stall):
    """What a slow app costs (issue 53): Central's values(of:) at its default capacity while a
    flood of 100,000 values a second runs; the consumer takes one, stops for `stall` seconds,
    then reads on until every value was delivered or dropped. Keys (a contract):
    stalled_consumer_peak_rss_bytes (the process's VmHWM), stalled_consumer_rss_before_bytes,
    stalled_consumer_dropped, stalled_consumer_delivered."""
    figure = bench_json([bench, 'stalled-consumer', '--stall', str(stall)])
    print(f'a stalled consumer: Central values(of:) (capacity {figure["capacity"]}), {figure["rate_per_s"]:,} values/s of '
          f'{figure["payload"]} bytes, the consumer stopped for {stall} s')
    print(f'  RSS before the flood {figure["rss_before_bytes"] / 1e6:.1f} MB, peak {figure["peak_rss_bytes"] / 1e6:.1f} MB; '
          f'{figure["delivered"]:,} values delivered, {figure["dropped"]:,} dropped (the oldest, counted by the stream) '
          f'of {figure["notifications"]:,}')
    print()
    return {'stalled_consumer_peak_rss_bytes': figure['peak_rss_bytes'], 'stalled_consumer_rss_before_bytes': figure['rss_before_bytes'],
            'stalled_consumer_dropped': figure['dropped'], 'stalled_consumer_delivered': figure['delivered'],
            'stalled_consumer_stall_s': stall}


def l2cap_vs_gatt(bench, transport, address, runs, octets):
    """The same octets out and back on one link: an L2CAP LE credit-based channel to the
    peer's echo PSM against GATT Write Commands to its echo characteristic, notified back."""
    figure = bench_json([bench, 'l2cap', '--transport', transport, '--addresses', address, '--count', str(octets),
                         '--runs', str(runs)])
    l2cap, gatt = figure['l2cap_octets_per_s']['median'], figure['gatt_octets_per_s']['median']
    print(f'L2CAP channel vs GATT on one link: {octets} octets echoed, {runs} runs each, interleaved')
    print(f'  {"L2CAP credit-based channel":<34} {l2cap / 1024:9.1f} KiB/s  (K-frames of 247 octets, SDUs of the peer\'s MTU)')
    print(f'  {"GATT Write Command + notification":<34} {gatt / 1024:9.1f} KiB/s  (244 octets a PDU)')
    print(f'  ratio: the channel carries {figure["ratio"]:.2f}x as much per second (the Python peer is the limit of both)')
    print()
    return figure


def allocations(directory):
    """Heap allocations per item of the in-memory paths, from the package-benchmark suite's
    p90 export (`swift package benchmark --format metricP90AbsoluteThresholds`)."""
    figures = {}
    for path in glob.glob(os.path.join(directory, 'BluejayBenchmarks.*.p90.json')):
        name = os.path.basename(path)[len('BluejayBenchmarks.'):-len('.p90.json')]
        with open(path) as f:
            figures[name] = json.load(f)
    if not figures:
        sys.exit(f'no package-benchmark results in {directory}')
    per_item = {'receive_244_per_notification': ('receive-244', 10000), 'receive_20_per_notification': ('receive-20', 10000),
                'bluejay_listen_244_per_value': ('bluejay-listen-244', 10000), 'central_values_244_per_value': ('central-values-244', 10000),
                'send_244_per_packet': ('send-244', 10000), 'decode_notification_244': ('decode-notification-244', 1000),
                'encode_write_command_244': ('encode-write-command-244', 1000)}
    result = {'per_run_p90': figures}
    print('heap allocations (package-benchmark, p90 of its runs; Benchmarks/BluejayBenchmarks)')
    for key, (name, items) in per_item.items():
        if name in figures and 'mallocCountTotal' in figures[name]:
            result[key] = figures[name]['mallocCountTotal'] / items
            print(f'  {key:<32} {result[key]:.3f}')
    print()
    return result


GOALS = {'static_binary_bytes': 16_000_000, 'peak_rss_bytes_listen': 15_000_000, 'reconnect_cached_round_trips': 2}


def footprint(static, static_map, transport, address, seconds):
    """The stripped static binary by component; peak RSS of its listen, flooded and idle,
    by cause (VmHWM: ru_maxrss would carry this Python process's own size across exec)."""
    components, sections = footprint_report.map_components(static_map)
    size = os.path.getsize(static)
    footprint_report.print_components(components, size)
    inputs = footprint_report.map_inputs(static_map)
    profiles = footprint_report.listen_rss(static, transport, address, seconds, inputs)
    serve = footprint_report.serve_rss(static, seconds, inputs)
    footprint_report.print_rss(profiles, seconds, serve)
    flooded, idle = profiles['flood']['vm_hwm_bytes'], profiles['idle']['vm_hwm_bytes']
    keys = ('causes', 'detail', 'threads_max', 'binary_pages_by_component')
    return {'static_binary_bytes': size, 'components': components,
            'peak_rss_bytes_listen': flooded, 'peak_rss_bytes_idle': idle, 'listen_seconds': seconds,
            'listen_rss_by_cause': {name: {k: profiles[name][k] for k in keys + ('values_received',)} for name in ('idle', 'flood')},
            'peak_rss_bytes_serve': serve['vm_hwm_bytes'], 'serve_rss_by_cause': {k: serve[k] for k in keys + ('notifying',)}}


def goals(results):
    """Issue 25's goals against what this run measured."""
    measured = {'static_binary_bytes': results['footprint']['static_binary_bytes'],
                'peak_rss_bytes_listen': max(results['footprint']['peak_rss_bytes_listen'], results['footprint']['peak_rss_bytes_idle']),
                'reconnect_cached_round_trips': results['reconnect']['cached']['round_trips']}
    table = {key: {'goal': goal, 'measured': measured[key], 'met': measured[key] <= goal} for key, goal in GOALS.items()}
    table['reconnect_cached_round_trips']['case'] = results['reconnect']['cached']['case']
    print('goals (issue 25)')
    for key, row in table.items():
        print(f'  {key:<30} {row["measured"]:>14,} against {row["goal"]:>12,}: {"met" if row["met"] else "missed"}')
    print()
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--bluejay', required=True, help='a release build of bluejay')
    parser.add_argument('--bench', required=True, help='a release build of bluejay-bench')
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--connections', type=int, default=20, help='connections per reconnect figure')
    parser.add_argument('--notifications', type=int, default=200000, help='per receive run')
    parser.add_argument('--listen-seconds', type=int, default=60)
    parser.add_argument('--stall-seconds', type=int, default=30, help="how long the stalled consumer stops reading")
    parser.add_argument('--results', default=os.path.join(ROOT, 'bench', 'results.json'))
    parser.add_argument('--static', required=True, help='the stripped static bluejay (make static)')
    parser.add_argument('--static-map', help='its link map (default: bluejay.map beside the unstripped build)')
    parser.add_argument('--benchmarks', required=True, help="the package-benchmark suite's p90 export (a directory)")
    parser.add_argument('--gateway', help='a release build of bluejay-gateway: the `gateway` figures (values/s to an MQTT '
                        'subscriber, latency p50/p99, CPU per value)')
    parser.add_argument('--baseline-bench', help='a release bluejay-bench of an earlier commit: its receive and app paths '
                        'run interleaved with this one, mode by mode, and the ratios are reported')
    options = parser.parse_args()
    if len(TRACES) != 7:
        sys.exit(f'expected the 7 shared traces beside the clone, found {len(TRACES)}')
    total = sum(os.path.getsize(t) for t in TRACES)
    print(f'inputs: {len(TRACES)} shared traces, {total / 1e6:.2f} MB; bluejay = {options.bluejay}\n')
    results = {'machine': machine(), 'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), 'commit': commit()}

    results['receive'] = {}
    for payload, (ours, theirs) in receive(options.bench, max(options.runs, 5), options.notifications).items():
        key = '' if payload == 244 else f'_{payload}'
        results['receive'][f'notifications_per_s{key}'] = ours['notifications_per_s']
        results['receive'][f'notifications_per_cpu_s{key}'] = ours['notifications_per_cpu_s']
        results['receive'][f'bumble_notifications_per_s{key}'] = {k: theirs[k] for k in ('median', 'min', 'max', 'runs')}
    if options.baseline_bench:
        results['receive']['against_baseline'] = against_baseline(options.bench, options.baseline_bench,
                                                                  max(options.runs, 5), options.notifications)
    sent = send(options.bench, max(options.runs, 5), 100000)
    results['send'] = {'host_us_per_packet': sent['host_us_per_packet'], 'buffer_idle_while_queued': sent['buffer_idle_while_queued']}
    results['allocations'] = allocations(options.benchmarks)
    results['receive']['allocations_per_notification'] = results['allocations'].get('receive_244_per_notification')
    results['receive']['allocations_per_notification_20'] = results['allocations'].get('receive_20_per_notification')
    results['send']['allocations_per_packet'] = results['allocations'].get('send_244_per_packet')
    results['app'], seqpacket = app_paths(options.bench, options.bluejay, options.static, options.runs, options.notifications,
                                          results['allocations'])
    results['app'].update(stalled_consumer(options.bench, options.stall_seconds))
    results['receive']['seqpacket_per_s'] = seqpacket['per_s']
    results['receive']['seqpacket_per_cpu_s'] = seqpacket['per_cpu_s']
    # Issue 51: the threads of the process receiving the user channel's way, at the flood's end.
    results['receive']['threads'] = seqpacket['threads']

    tshark = 'tshark'
    # tshark is given the same work per file; a shell loop keeps it to one command line.
    tshark_all = ['sh', '-c', ' && '.join(f'{tshark} -r "{t}" -q' for t in TRACES)]
    results['trace_summary_ms'] = compare('trace summary (all 7 traces)',
                                          ('bluejay trace --summary', [options.bluejay, 'trace', '--summary', '--json', *TRACES]),
                                          ('tshark -r -q', tshark_all), options.runs)
    tshark_lines = ['sh', '-c', ' && '.join(f'{tshark} -r "{t}" > /dev/null' for t in TRACES)]
    results['trace_decode_ms'] = compare('trace decode, one line per packet (all 7 traces)',
                                         ('bluejay trace', [options.bluejay, 'trace', *TRACES]),
                                         ('tshark -r', tshark_lines), options.runs)

    results['mock_startup'] = mock_startup(options.bluejay, options.runs)
    results['central'] = central_scaling(options.bench, 3, 20000)
    # Issue 35: notifications sent as the peripheral (in memory, to the Bumble central) and
    # the RSS of `bluejay serve` (Fixtures/bench/peripheral.py).
    results['peripheral'] = peripheral_report.peripheral(options.bluejay, options.bench, max(options.runs, 5), options.notifications)
    # Issue 51's key for the same figure: `bluejay serve`'s peak RSS.
    results['serve'] = {'peak_rss_bytes': results['peripheral']['serve']['peak_rss_bytes']}

    peer, transport, address = start_peer()
    try:
        results['bringup_ms'] = compare('controller bring-up against the Bumble peer over TCP',
                                        ('bluejay info', [options.bluejay, 'info', '--transport', transport]),
                                        ('bumble-controller-info', [os.path.join(ROOT, '.venv/bin/bumble-controller-info'),
                                                                    transport.replace('tcp:', 'tcp-client:', 1)]),
                                        options.runs)
        results['reconnect'] = reconnect(options.bluejay, transport, address, max(options.connections, 20))
        results['end_to_end'] = {'flood': flood(options.bluejay, transport, address, 20000)}
        results['l2cap_vs_gatt'] = l2cap_vs_gatt(options.bench, transport, address, 3, 262144)
        results['footprint'] = footprint(options.static, options.static_map or os.path.join(os.path.dirname(options.static), 'bluejay.map'),
                                         transport, address, options.listen_seconds)
        # The static binary's serve, as the board runs it (`peak_rss_bytes` above is the
        # release build's, linked to the shared Swift libraries).
        results['serve']['static_peak_rss_bytes'] = results['footprint']['peak_rss_bytes_serve']
    finally:
        peer.terminate()
        peer.wait()
    if options.gateway:
        results['gateway'] = gateway_bench(options.gateway)
    results['goals'] = goals(results)
    os.makedirs(os.path.dirname(options.results), exist_ok=True)
    with open(options.results, 'w') as out:
        json.dump(results, out, indent=2, sort_keys=True)
        out.write('\n')
    print(f'wrote {options.results}')


def central_scaling(bench, runs, count):
    """A gateway on Central: connect-all time and the aggregate flood rate from 1, 2 and 4 of
    the peer's peripherals at once (each floods `count` notifications of 100 octets)."""
    figures = {}
    print(f'Central: connect all, then every peripheral floods {count} notifications at once ({runs} runs each)')
    print(f'  {"peripherals":<12} {"connect all":>12} {"notifications/s (all)":>22}')
    for n in (1, 2, 4):
        connects, rates = [], []
        for _ in range(runs):
            peer = subprocess.Popen([os.path.join(ROOT, '.venv/bin/python'), os.path.join(ROOT, 'Fixtures/peer/peer.py'),
                                     '--peripherals', str(n)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                line = peer.stdout.readline()
                fields = dict(part.split('=', 1) for part in line.split()[1:] if '=' in part)
                addresses = [fields['address']] + [fields[f'address{k}'] for k in range(2, n + 1)]
                figure = bench_json([bench, 'central', '--transport', fields['transport'], '--addresses', ','.join(addresses),
                                     '--count', str(count), '--payload', '100'])
            finally:
                peer.terminate()
                peer.wait()
            connects.append(figure['connect_all_ms'])
            rates.append(figure['notifications_per_s'])
        figures[str(n)] = {'connect_all_ms': spread(connects), 'notifications_per_s': spread(rates)}
        print(f'  {n:<12} {statistics.median(connects):>9.1f} ms {statistics.median(rates):>22,.0f}')
    print()
    return figures


DEMO_RECORDING = os.path.join(ROOT, 'Fixtures', 'traces', 'bluejay-api-demo.btsnoop')


def mock_startup(bluejay, runs):
    """A GATT peer from nothing to a first value, interleaved: the virtual peer rebuilt
    from the demo recording (`mock:`, in the process) against the Bumble peer (its Python
    process started until READY, then the same read over TCP)."""
    def ours():
        start = time.perf_counter()
        subprocess.run([bluejay, 'read', 'F0:0D:B1:E7:00:01/random', '180D', '2A38', '--transport', f'mock:{DEMO_RECORDING}'],
                       check=True, capture_output=True)
        return time.perf_counter() - start

    def bumble():
        start = time.perf_counter()
        peer, transport, address = start_peer()
        try:
            subprocess.run([bluejay, 'read', f'{address}/random', '180D', '2A38', '--transport', transport],
                           check=True, capture_output=True)
        finally:
            peer.terminate()
            peer.wait()
        return time.perf_counter() - start

    a, b = [], []
    for _ in range(runs):
        a.append(ours())
        b.append(bumble())
    ta, tb = statistics.median(a), statistics.median(b)
    print(f'GATT peer start to first read value  ({runs} runs each, interleaved)')
    print(f'  {"mock: (virtual controller)":<28} {ta * 1000:9.1f} ms')
    print(f'  {"Bumble peer over TCP":<28} {tb * 1000:9.1f} ms')
    print(f'  ratio: the virtual peer starts {tb / ta:.1f}x faster')
    print()
    return {'mock_ms': spread([x * 1000 for x in a]), 'bumble_ms': spread([x * 1000 for x in b]), 'ratio': tb / ta}


def machine():
    cpu = 'unknown'
    try:
        with open('/proc/cpuinfo') as info:
            cpu = next(line.split(':', 1)[1].strip() for line in info if line.startswith('model name'))
    except (OSError, StopIteration):
        pass
    return {'cpu': cpu, 'cores': os.cpu_count(), 'kernel': os.uname().release,
            'memory_bytes': os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')}


def commit(root=ROOT):
    result = subprocess.run(['git', '-C', root, 'rev-parse', 'HEAD'], capture_output=True, text=True)
    return result.stdout.strip() or None


if __name__ == '__main__':
    main()
