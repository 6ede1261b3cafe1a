#!/usr/bin/env python3
"""Side-by-side benchmarks for `make bench`.

Each pair of commands does the same job and runs interleaved in one process, so the
ratios hold on a noisy machine even when the absolute times do not. For every command:
median wall time over N runs and peak resident memory (ru_maxrss from wait4).

  trace summary  bluejay trace --summary --json (all shared traces)  vs  tshark -r -q (full dissection)
  trace decode   bluejay trace (readable lines)                      vs  tshark -r (one line per frame)
  bring-up       bluejay info against the Bumble peer                vs  bumble-controller-info (Bumble's Python host)
  reconnect      bluejay read of one characteristic with the discovery cache (warm) vs --no-cache:
                 ATT requests before the value arrived, and the time to it (from the captures'
                 btsnoop timestamps, and the whole process's wall time)
"""
import argparse
import glob
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

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


def start_peer():
    peer = subprocess.Popen([os.path.join(ROOT, '.venv/bin/python'), os.path.join(ROOT, 'Fixtures/peer/peer.py')],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = peer.stdout.readline()
    if not line.startswith('READY '):
        peer.terminate()
        sys.exit(f'the peer did not start: {line!r}')
    fields = dict(part.split('=', 1) for part in line.split()[1:5])
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


def until_value(path):
    """(ATT requests sent, of which Exchange MTU, discovery requests, µs from the first ATT
    PDU to the Read Response carrying the value) up to that response."""
    pdus = att_pdus(path)
    requests = mtu = discovery = 0
    for timestamp, sent, pdu in pdus:
        if sent and pdu[0] in ATT_REQUESTS:
            requests += 1
            mtu += pdu[0] == 0x02
            discovery += pdu[0] in ATT_DISCOVERY or (
                pdu[0] == 0x08 and pdu[5:] in (b'\x00\x28', b'\x01\x28', b'\x02\x28', b'\x03\x28'))
        if not sent and pdu[0] == 0x0B and pdu[1:] == READ_ONLY_VALUE:
            return requests, mtu, discovery, timestamp - pdus[0][0]
    sys.exit(f'{path}: no Read Response with the value')


def reconnect(bluejay, transport, address, runs):
    """bluejay read with a warm discovery cache vs --no-cache, interleaved."""
    work = tempfile.mkdtemp(prefix='bluejay-bench-')
    env = dict(os.environ, BLUEJAY_STORE=os.path.join(work, 'store'))
    env.pop('BLUEJAY_BTSNOOP', None)

    def read(no_cache, capture):
        argv = [bluejay, 'read', f'{address}/random', CUSTOM_SERVICE, READ_ONLY, '--transport', transport,
                '--capture', capture] + (['--no-cache'] if no_cache else [])
        start = time.perf_counter()
        result = subprocess.run(argv, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if result.returncode != 0 or 'Bluejay read-only' not in result.stdout:
            sys.exit(f'benchmark command failed ({result.returncode}): {" ".join(argv)}\n{result.stderr}')
        return elapsed, until_value(capture)

    try:
        read(False, os.path.join(work, 'warm-up.btsnoop'))  # fills the cache
        results = {False: [], True: []}
        for index in range(runs):
            for no_cache in (False, True):
                capture = os.path.join(work, f'{index}-{"nocache" if no_cache else "cache"}.btsnoop')
                results[no_cache].append(read(no_cache, capture))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = {}
    for no_cache, label in ((False, 'with the cache (warm)'), (True, '--no-cache')):
        counts = {(r[1][0], r[1][1], r[1][2]) for r in results[no_cache]}
        if len(counts) != 1:
            print(f'  note: {label}: the request counts varied between runs: {sorted(counts)}')
        requests, mtu, discovery = max(counts)
        air = [r[1][3] / 1000 for r in results[no_cache]]
        wall = [r[0] * 1000 for r in results[no_cache]]
        rows[no_cache] = (label, requests, requests - mtu, discovery, statistics.median(air), min(air), max(air),
                          statistics.median(wall))
    if rows[False][3]:
        print(f'  note: the cached runs sent {rows[False][3]} discovery requests (expected none)')
    print(f'reconnect: bluejay read {address} <custom service> B1E70008… against the Bumble peer '
          f'({runs} runs each, interleaved, after one warm-up run that filled the cache)')
    print(f'  {"":<22} {"ATT round trips to the value":>29} {"1st ATT PDU -> value (capture)":>31} {"process wall time":>18}')
    print(f'  {"":<22} {"with MTU xchg / without":>29} {"median (min-max)":>31} {"median":>18}')
    for no_cache in (False, True):
        label, requests, without, _, median_air, low, high, wall = rows[no_cache]
        air = f'{median_air:.2f} ms ({low:.2f}-{high:.2f})'
        print(f'  {label:<22} {f"{requests} / {without}":>29} {air:>31} {f"{wall:.1f} ms":>18}')
    cached, uncached = rows[False], rows[True]
    print(f'  {"ratio (no-cache/cache)":<22} {f"{uncached[1] / cached[1]:.1f}x / {uncached[2] / cached[2]:.1f}x":>29} '
          f'{f"{uncached[4] / cached[4]:.1f}x":>31} {f"{uncached[7] / cached[7]:.2f}x":>18}')
    print('  The capture figure runs from the first ATT PDU (Exchange MTU) to the Read Response with the value, by the')
    print('  btsnoop timestamps bluejay writes: the better measure of what the cache saves. The wall time also includes')
    print('  process start, controller bring-up over TCP, scan-free connection set-up and the disconnect, which the')
    print('  cache does not change.')
    print()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--bluejay', required=True, help='a release build of bluejay')
    parser.add_argument('--runs', type=int, default=7)
    options = parser.parse_args()
    if len(TRACES) != 7:
        sys.exit(f'expected the 7 shared traces beside the clone, found {len(TRACES)}')
    total = sum(os.path.getsize(t) for t in TRACES)
    print(f'inputs: {len(TRACES)} shared traces, {total / 1e6:.2f} MB; bluejay = {options.bluejay}\n')

    tshark = 'tshark'
    # tshark is given the same work per file; a shell loop keeps it to one command line.
    tshark_all = ['sh', '-c', ' && '.join(f'{tshark} -r "{t}" -q' for t in TRACES)]
    compare('trace summary (all 7 traces)',
            ('bluejay trace --summary', [options.bluejay, 'trace', '--summary', '--json', *TRACES]),
            ('tshark -r -q', tshark_all), options.runs)
    tshark_lines = ['sh', '-c', ' && '.join(f'{tshark} -r "{t}" > /dev/null' for t in TRACES)]
    compare('trace decode, one line per packet (all 7 traces)',
            ('bluejay trace', [options.bluejay, 'trace', *TRACES]),
            ('tshark -r', tshark_lines), options.runs)

    peer, transport, address = start_peer()
    try:
        compare('controller bring-up against the Bumble peer over TCP',
                ('bluejay info', [options.bluejay, 'info', '--transport', transport]),
                ('bumble-controller-info', [os.path.join(ROOT, '.venv/bin/bumble-controller-info'),
                                            transport.replace('tcp:', 'tcp-client:', 1)]),
                options.runs)
        reconnect(options.bluejay, transport, address, max(options.runs, 5))
    finally:
        peer.terminate()
        peer.wait()


if __name__ == '__main__':
    main()
