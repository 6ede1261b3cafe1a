#!/usr/bin/env python3
"""`make symbol-order`: the functions `bluejay` runs on a board, in the order it first runs
them, for the linker to lay out together (lld's --symbol-ordering-file; `make static`).

A file-backed page counts in a process's resident memory once touched, and the kernel maps
a fault's neighbours with it (fault-around, 64 KiB): code that runs scattered over the whole
binary makes nearly all of it resident. Laid out together, it is a few megabytes.

Runs, under callgrind (valgrind), the board's everyday commands against the Bumble peer:
info, a read with and without the discovery cache, listen idle and under the peer's flood.
The names are the object files' symbols (mangled); a name a later build no longer has is
skipped by the linker, so the file goes stale slowly. valgrind 3.19 cannot read DWARF 5:
the binary is given its symbol table alone (strip --strip-debug).
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

CUSTOM_SERVICE = 'B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00'
READ_ONLY = 'B1E70008-9D3B-4C7A-8A5E-6F2D0C1B0A00'


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--binary', required=True, help='an unstripped release bluejay')
    parser.add_argument('--output', required=True)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix='bluejay-order-')
    binary = os.path.join(work, 'bluejay')
    subprocess.run(['strip', '--strip-debug', '-o', binary, options.binary], check=True)
    env = dict(os.environ, BLUEJAY_STORE=os.path.join(work, 'store'))
    peer, transport, address = bench.start_peer()
    target = f'{address}/random'
    flood = '0x0029=01' + struct.pack('<IH', 0xFFFFFFFF, 244).hex()
    runs = [('info', ['info', '--transport', transport]),
            ('read-uncached', ['read', target, CUSTOM_SERVICE, READ_ONLY, '--transport', transport, '--no-cache']),
            ('read', ['read', target, CUSTOM_SERVICE, READ_ONLY, '--transport', transport]),
            ('read-cached', ['read', target, CUSTOM_SERVICE, READ_ONLY, '--transport', transport]),
            ('listen-idle', ['listen', target, '--handle', '0x002B', '--transport', transport, '--duration', '4']),
            ('listen-flood', ['listen', target, '--handle', '0x002B', '--transport', transport, '--duration', '6', '--write', flood])]
    names, seen = [], set()
    try:
        for name, arguments in runs:
            out = os.path.join(work, f'{name}.callgrind')
            result = subprocess.run(['valgrind', '--tool=callgrind', '--demangle=no', '--dump-instr=no', '--compress-strings=no',
                                     '--compress-pos=no', f'--callgrind-out-file={out}', binary, *arguments],
                                    env=env, capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f'{name} failed under callgrind:\n{result.stderr[-2000:]}')
            added = 0
            with open(out) as profile:
                # fn= names the function of the lines that follow; ob= its object file.
                object_file = None
                for line in profile:
                    if line.startswith('ob='):
                        object_file = line[3:].strip()
                    match = re.match(r'^fn=(?:\(\d+\) )?(.+)$', line.strip())
                    if match and object_file == binary and match.group(1) not in seen and not match.group(1).startswith('0x'):
                        seen.add(match.group(1))
                        names.append(match.group(1))
                        added += 1
            print(f'{name}: {added} more functions')
    finally:
        peer.terminate()
        peer.wait()
    with open(options.output, 'w') as out:
        out.write('\n'.join(names) + '\n')
    print(f'wrote {len(names)} symbols to {options.output}')


if __name__ == '__main__':
    main()
