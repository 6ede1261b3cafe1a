#!/usr/bin/env python3
"""Side-by-side benchmarks for `make bench`.

Each pair of commands does the same job and runs interleaved in one process, so the
ratios hold on a noisy machine even when the absolute times do not. For every command:
median wall time over N runs and peak resident memory (ru_maxrss from wait4).

  trace summary  bluejay trace --summary --json (all shared traces)  vs  tshark -r -q (full dissection)
  trace decode   bluejay trace (readable lines)                      vs  tshark -r (one line per frame)
  bring-up       bluejay info against the Bumble peer                vs  bumble-controller-info (Bumble's Python host)
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
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
    return peer, fields['transport']


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

    peer, transport = start_peer()
    try:
        compare('controller bring-up against the Bumble peer over TCP',
                ('bluejay info', [options.bluejay, 'info', '--transport', transport]),
                ('bumble-controller-info', [os.path.join(ROOT, '.venv/bin/bumble-controller-info'),
                                            transport.replace('tcp:', 'tcp-client:', 1)]),
                options.runs)
    finally:
        peer.terminate()
        peer.wait()


if __name__ == '__main__':
    main()
