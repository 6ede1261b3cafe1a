#!/usr/bin/env python3
"""`make arm64`'s checks: the aarch64 build (Fixtures/arm64/build.sh) run under qemu-aarch64.

  check.py --python .venv/bin/python --x86 .build/debug/bluejay [--work .build/arm64]

Every aarch64 program runs as `qemu-aarch64-static -L ROOT PROGRAM …`, ROOT being the arm64
root (Fixtures/arm64/root.sh): its ld.so, libc, libstdc++ and libssl3t64, as a board's.
Explicit rather than through binfmt_misc, so that nothing on the machine is registered.

The checks:
- `file` says ELF 64-bit LSB … ARM aarch64 for both binaries, and neither needs a Swift
  library at run time (readelf's NEEDED: the runtime is linked in);
- against the Bumble peer over TCP (Fixtures/peer/peer.py, its READY line): info, scan,
  gatt, read, write, listen --count, pair, each with the arguments and expectations of
  Tests/IntegrationTests; serve, with our own x86 central (the host's debug bluejay) on the
  other controller of a `--two-hosts` link finding it, dumping and reading it;
- `bluejay trace` and `trace --summary --json` over every trace of ../shared/traces and
  Fixtures/real-traces: stdout, stderr and exit status byte for byte the x86 build's;
- bluejay-bench's in-memory receive path, aarch64 under emulation against x86 built by the
  same compiler with the same flags, as a ratio: emulation's cost, not a board's speed;
- the test bundle's suites of the layers below Bluejay (LOWER_SUITES), under qemu.
It ends with a table: each check, pass or fail, its time; sizes; build times. Exit status 1
when a check failed.

Every wait is bounded by the hang guard (HANG_GUARD seconds) and ends when its condition
holds; nothing sleeps.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
HANG_GUARD = 120
QEMU = 'qemu-aarch64-static'
PEER_SCRIPT = os.path.join(ROOT_DIR, 'Fixtures/peer/peer.py')
# A whole suite is no wait but work: a debug build under emulation, 20x slower than x86
# (BluetoothCryptoTests' P-256 vectors take minutes). Its bound, instead of the hang guard.
SUITE_LIMIT = 1200
# Where Debian's libswiftlang puts Swift's runtime, in either root.
SWIFT_RUNTIME = '/usr/libexec/swift/lib/swift/linux'

# The test suites of the layers below Bluejay (one test target each; Storage and
# DiscoveryCache are tested in GATTTests, BluetoothCore in HCITests). CorpusTests runs the
# decoders over ../shared/traces. Left out, and why: see LEFT_OUT.
LOWER_SUITES = ['HCITests', 'L2CAPTests', 'ATTTests', 'GATTTests', 'SMPTests', 'BluetoothCryptoTests',
                'TraceDecodingTests', 'AdvertisementsTests', 'CorpusTests', 'FuzzTargetTests']
# Within a suite, what a debug build under emulation cannot run within SUITE_LIMIT (--skip).
SLOW = {'BluetoothCryptoTests': ['P256Tests', 'WycheproofTests']}
# Tests that start a program of the host's (/bin/cat, swift, the built bluejay): under
# qemu-user with no binfmt registered, a child the bundle starts is looked up in the arm64
# root and cannot be run. What they check is the test rig's or the x86 tool's; the aarch64
# tool itself is checked above (`trace` byte for byte, the peer checks).
HOST_PROGRAMS = {'HCITests': ['PackageGraphTests', 'RunProgramTests'], 'CorpusTests': ['CorpusTests/commandLine']}
LEFT_OUT = {
    'HCITests.PackageGraphTests, .RunProgramTests; CorpusTests/commandLine…': 'they start host programs '
        '(swift package, /bin/cat, the built bluejay), which a bundle under qemu-user cannot exec; the aarch64 '
        'bluejay trace is compared byte for byte with x86 by the trace check',
    'BluetoothCryptoTests.P256Tests, .WycheproofTests': 'P-256 scalar multiplications by the hundred in a debug build, '
        'under emulation: more than SUITE_LIMIT; the same P-256 code passes in SMPTests (pairing) and `peer: pair`',
    'BluejayTests, ImportOnlyBluejayTests, VirtualControllerTests, ReplayTests, GatewayTests, CLITests':
        'the Bluejay layer and above, not asked for; the tool itself is checked against the peer above',
    'IntegrationTests': 'drives the x86 peer and tools (Python, tshark, mosquitto) from inside the bundle',
}

# The Bumble peer's GATT database as Tests/IntegrationTests/GATTCommandLineTests.swift holds it.
PEER_SERVICES = ['1800', '1801', '180D', '180A', '180F', 'B1E70001-9D3B-4C7A-8A5E-6F2D0C1B0A00',
                 'B1E70201-9D3B-4C7A-8A5E-6F2D0C1B0A00', 'B1E70200-9D3B-4C7A-8A5E-6F2D0C1B0A00']


class Failed(Exception):
    """A check's expectation did not hold; the message says which."""


def expect(condition, message):
    if not condition:
        raise Failed(message)


class Run:
    """One finished program: exit status, output (bytes), seconds."""

    def __init__(self, argv, status, stdout, stderr, seconds):
        self.argv, self.status, self.stdout, self.stderr, self.seconds = argv, status, stdout, stderr, seconds

    @property
    def out(self):
        return self.stdout.decode(errors='replace')

    @property
    def err(self):
        return self.stderr.decode(errors='replace')

    def ok(self):
        expect(self.status == 0, f'{" ".join(self.argv[-6:])}: exit {self.status}: {self.err[-800:]}')
        return self


def run(argv, env=None, stdin=b'', limit=HANG_GUARD):
    started = time.monotonic()
    try:
        result = subprocess.run(argv, input=stdin, capture_output=True, timeout=limit,
                                env=None if env is None else {**os.environ, **env})
    except subprocess.TimeoutExpired:
        raise Failed(f'hang guard: {" ".join(argv)} still running after {limit} s')
    return Run(argv, result.returncode, result.stdout, result.stderr, time.monotonic() - started)


def read_line(stream, deadline, what):
    """One line from a pipe, waiting at most until `deadline`."""
    fd, data = stream.fileno(), b''
    while not data.endswith(b'\n'):
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            raise Failed(f'hang guard: no line from {what} within {HANG_GUARD} s')
        chunk = os.read(fd, 1)
        if not chunk:
            raise Failed(f'{what} ended before its line (got {data!r})')
        data += chunk
    return data.decode()


class Peer:
    """The Bumble peer (Fixtures/peer/peer.py), up once its READY line is read."""

    def __init__(self, python, arguments=()):
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([python, PEER_SCRIPT, *arguments], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=self.log)
        try:
            line = read_line(self.process.stdout, time.monotonic() + HANG_GUARD, 'the peer')
        except Failed as error:
            self.stop()
            raise Failed(f'{error}: {self.tail()}')
        expect(line.startswith('READY'), f'the peer said {line!r}')
        self.fields = dict(re.findall(r'(\w+)=(\S+)', line))
        self.transport = self.fields['transport']
        self.address = self.fields.get('address')

    def tail(self):
        self.log.seek(0)
        return self.log.read().decode(errors='replace')[-1500:]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=HANG_GUARD)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Checks:
    def __init__(self, options):
        self.o = options
        self.work = os.path.abspath(options.work)
        self.root = os.path.join(self.work, 'root')
        self.bluejay = os.path.join(self.work, 'bluejay')
        self.gateway = os.path.join(self.work, 'bluejay-gateway')
        self.rows = []
        self.store = tempfile.mkdtemp(prefix='bluejay-arm64-')

    # -- running aarch64 programs -------------------------------------------------------------
    def arm(self, program, arguments, env=None, stdin=b'', limit=HANG_GUARD):
        return run([QEMU, '-L', self.root, program, *arguments], env=env, stdin=stdin, limit=limit)

    def bj(self, arguments, env=None, stdin=b''):
        return self.arm(self.bluejay, arguments, env=env, stdin=stdin)

    def new_store(self):
        return {'BLUEJAY_STORE': tempfile.mkdtemp(dir=self.store)}

    def check(self, name, body):
        started = time.monotonic()
        try:
            note = body() or ''
            result = 'pass'
        except Failed as error:
            note, result = str(error), 'FAIL'
        except Exception as error:  # a broken check is a failed one, with its reason
            note, result = f'{type(error).__name__}: {error}', 'FAIL'
        seconds = time.monotonic() - started
        self.rows.append((name, result, seconds, note))
        print(f'== arm64 check: {name}: {result} ({seconds:.1f} s) {note}', flush=True)

    # -- the binaries ---------------------------------------------------------------------------
    def binary(self, path):
        described = subprocess.run(['file', '-b', path], capture_output=True, text=True).stdout.strip()
        expect(re.match(r'ELF 64-bit LSB .*ARM aarch64', described), f'file says: {described}')
        needed = re.findall(r'\(NEEDED\).*\[(.*)\]', subprocess.run(['readelf', '-d', path], capture_output=True,
                                                                     text=True).stdout)
        expect(not [n for n in needed if 'swift' in n.lower() or 'Foundation' in n or 'dispatch' in n],
               f'needs Swift libraries at run time: {needed}')
        self.described = getattr(self, 'described', {})
        self.described[path] = (described, needed)
        return f'{described.split(",")[0]}, ARM aarch64; needs {", ".join(needed)}'

    # -- against the Bumble peer ----------------------------------------------------------------
    def info(self):
        with Peer(self.o.python) as peer:
            result = self.bj(['info', '--transport', peer.transport]).ok()
            expect('Address:' in result.out and 'ACL buffers:' in result.out, f'info printed {result.out!r}')
            return next((line for line in result.out.splitlines() if line.startswith('Address:')), '')

    def scan(self):
        with Peer(self.o.python) as peer:
            result = self.bj(['scan', '--transport', peer.transport, '--duration', '1', '--json']).ok()
            lines = result.out.splitlines()
            expect(len(lines) == 1, f'one discovery per peripheral: {result.out!r}')
            found = json.loads(lines[0])
            expect(found['address'] == peer.address and found['name'] == 'Bluejay HRM' and found['scan_response'],
                   f'found {found}')
            return f'{found["name"]} {found["address"]} with its scan response'

    def gatt(self):
        with Peer(self.o.python) as peer:
            result = self.bj(['gatt', f'{peer.address}/random', '--transport', peer.transport, '--json', '--no-pair']).ok()
            tree = json.loads(result.out)
            services = [s['uuid'] for s in tree['services']]
            expect(tree['mtu'] == 517 and services == PEER_SERVICES, f'mtu {tree["mtu"]}, services {services}')
            return f'{len(services)} services, MTU 517'

    def read(self):
        with Peer(self.o.python) as peer:
            target = [f'{peer.address}/random', '--transport', peer.transport]
            name = json.loads(self.bj(['read', *target, '--handle', '3', '--json'], env=self.new_store()).ok().out)
            expect(name == {'handle': 3, 'value': '426c75656a61792048524d', 'text': 'Bluejay HRM'}, f'read {name}')
            # --long: Read, then Read Blob until a short part; the value is 0, 1, … 255, 0, … (512).
            long = self.bj(['read', *target, '--handle', '0x001F', '--long', '--mtu', '100', '--hex'], env=self.new_store()).ok()
            expect(long.out == bytes(i & 0xFF for i in range(512)).hex() + '\n', f'long read {long.out[:80]!r}…')
            return 'the device name; 512 octets by Read Blob at MTU 100'

    def write(self):
        with Peer(self.o.python) as peer:
            target = [f'{peer.address}/random', '--transport', peer.transport]
            request = self.bj(['write', *target, '--handle', '0x0013', '02', '--json'], env=self.new_store()).ok()
            expect(request.out == '{"bytes": 1, "handle": 19, "procedure": "Write Request"}\n', f'wrote {request.out!r}')
            forty = bytes(range(40)).hex()
            long = self.bj(['write', *target, '--handle', '0x001F', forty, '--long', '--mtu', '23', '--json'],
                           env=self.new_store()).ok()
            back = self.bj(['read', *target, '--handle', '0x001F', '--long', '--hex'], env=self.new_store()).ok()
            expect(back.out.startswith(forty), f'read back {back.out[:100]!r}… after {long.out!r}')
            return 'Write Request; 40 octets by Prepare/Execute at MTU 23, read back'

    def listen(self):
        with Peer(self.o.python, ['--heart-rate-on-subscribe']) as peer:
            result = self.bj(['listen', f'{peer.address}/random', '180D', '2A37', '--count', '3', '--json',
                              '--transport', peer.transport], env=self.new_store()).ok()
            values = [json.loads(line) for line in result.out.splitlines()]
            expect(len(values) == 3 and all(v['type'] == 'notification' for v in values), f'listened: {result.out!r}')
            return f'3 heart-rate notifications, then unsubscribed and exited ({result.err.strip()})'

    def pair(self):
        with Peer(self.o.python) as peer:
            store = self.new_store()
            target = [f'{peer.address}/random', '--transport', peer.transport]
            paired = json.loads(self.bj(['pair', *target, '--json'], env=store).ok().out)
            expect(paired['method'] == 'Just Works' and paired['secure_connections'], f'paired: {paired}')
            # A new process reads the encrypted-only characteristic with the stored bond.
            self.bj(['read', *target, '--handle', '0x0024'], env=store).ok()
            return 'LE Secure Connections, Just Works, bonded; a new process encrypts with the bond'

    def serve(self):
        database = os.path.join(self.store, 'serve.json')
        with open(database, 'w') as file:
            json.dump({'name': 'Bluejay Arm64', 'services': [{'uuid': '181A', 'characteristics': [
                {'uuid': '2A6E', 'properties': ['read'], 'value': '0a09'},
                {'uuid': 'B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00', 'properties': ['read', 'write'], 'text': '21'}]}]}, file)
        with Peer(self.o.python, ['--two-hosts']) as link:
            server = subprocess.Popen([QEMU, '-L', self.root, self.bluejay, 'serve', database, '--transport', link.transport,
                                       '--duration', str(HANG_GUARD)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **self.new_store()})
            try:
                first = read_line(server.stdout, time.monotonic() + HANG_GUARD, 'bluejay serve')
                expect(first.startswith('advertising as Bluejay Arm64'), f'serve said {first!r}')
                central = ['--transport', link.fields['transport2']]
                scan = run([self.o.x86, 'scan', *central, '--duration', '2', '--json', '--service', '181A'], env=self.new_store()).ok()
                found = json.loads(scan.out.splitlines()[0])
                address = f'{found["address"]}/{found["address_type"]}'
                tree = json.loads(run([self.o.x86, 'gatt', address, *central, '--json', '--no-pair'], env=self.new_store()).ok().out)
                expect('181A' in [s['uuid'] for s in tree['services']], f'our central found {tree}')
                value = json.loads(run([self.o.x86, 'read', address, '181A', 'B1E70A02-9D3B-4C7A-8A5E-6F2D0C1B0A00', *central,
                                        '--json'], env=self.new_store()).ok().out)
                expect(value.get('text') == '21', f'our central read {value}')
            finally:
                server.send_signal(signal.SIGINT)
                try:
                    output, errors = server.communicate(timeout=HANG_GUARD)
                except subprocess.TimeoutExpired:
                    server.kill()
                    output, errors = server.communicate()
            lines = output.decode(errors='replace').splitlines()
            expect(server.returncode == 0, f'serve exited {server.returncode}: {errors.decode(errors="replace")[-800:]}')
            expect(any(line.startswith('connected ') for line in lines), f'serve printed {lines}')
            return f'our x86 central found {address}, dumped and read it; serve saw {sum(l.startswith("connected ") for l in lines)} connections'

    # -- traces ---------------------------------------------------------------------------------
    def traces(self):
        folders = [os.path.join(ROOT_DIR, '..', 'shared', 'traces'), os.path.join(ROOT_DIR, 'Fixtures', 'real-traces')]
        files = sorted(os.path.join(folder, name) for folder in folders if os.path.isdir(folder)
                       for name in os.listdir(folder) if name.endswith('.btsnoop'))
        expect(files, 'no traces found')
        different = []
        for path in files:
            for form in (['trace', path], ['trace', '--summary', '--json', path]):
                ours, theirs = self.bj(form), run([self.o.x86, *form])
                if (ours.status, ours.stdout, ours.stderr) != (theirs.status, theirs.stdout, theirs.stderr):
                    different.append(f'{" ".join(form[1:-1]) or "full"} {os.path.basename(path)}')
        expect(not different, f'differ from x86: {different}')
        shared = sum(1 for f in files if '/shared/' in f)
        return (f'{len(files)} traces ({shared} of ../shared/traces, {len(files) - shared} of Fixtures/real-traces), '
                f'full and --summary --json: identical to x86')

    # -- the bench ------------------------------------------------------------------------------
    def bench(self):
        """Interleaved, one run each at a time, so that the machine's load drifting (other
        builds beside this one) moves both sides alike; the medians' ratio."""
        bench = os.path.join(self.work, 'bench')
        arguments = ['receive', '--payload', '244', '--count', str(self.o.bench_count), '--runs', '1']
        # The x86 one was linked against Debian 13's glibc, newer than the host's may be: run
        # with that root's ld.so and libraries.
        amd64 = os.path.abspath(self.o.amd64_root)
        x86_command = [os.path.join(amd64, 'usr/lib64/ld-linux-x86-64.so.2'), '--library-path',
                       os.path.join(amd64, 'usr/lib/x86_64-linux-gnu'), os.path.join(bench, 'bluejay-bench-x86_64')]
        aarch64, x86 = [], []
        for _ in range(self.o.bench_runs):
            aarch64.append(json.loads(self.arm(os.path.join(bench, 'bluejay-bench-aarch64'), arguments).ok().out))
            x86.append(json.loads(run([*x86_command, *arguments]).ok().out))
        ours, theirs = (statistics.median(r['notifications_per_s']['median'] for r in side) for side in (aarch64, x86))
        return (f'receive, {self.o.bench_count} notifications of 244 octets, median of {self.o.bench_runs} interleaved runs: '
                f'aarch64 under qemu-user emulation {ours:,.0f}/s, x86 {theirs:,.0f}/s: '
                f'ratio {ours / theirs:.3f} (emulation, not a board)')

    # -- the test bundle ------------------------------------------------------------------------
    def suite(self, name):
        bundle = os.path.join(self.work, 'scratch/aarch64-unknown-linux-gnu/debug/BluejayPackageTests.xctest')
        expect(os.path.exists(bundle), f'no test bundle at {bundle}')
        left_out = SLOW.get(name, []) + HOST_PROGRAMS.get(name, [])
        skips = [argument for test in left_out for argument in ('--skip', f'^{name}\\.{test}')]
        result = self.arm(bundle, ['--testing-library', 'swift-testing', '--filter', f'^{name}\\.', *skips],
                          env={'LD_LIBRARY_PATH': SWIFT_RUNTIME}, limit=SUITE_LIMIT)
        # Swift Testing writes its results to stdout or stderr (with colours on a terminal).
        text = re.sub(r'\x1b\[[0-9;]*m', '', result.out + result.err)
        summary = [line for line in text.splitlines() if re.search(r'Test run with \d+ tests?', line)]
        expect(result.status == 0, f'exit {result.status}: {(summary or [text[-1200:]])[-1]}')
        expect(summary and not re.search(r'with 0 tests', summary[-1]), f'no tests ran: {text[-300:]}')
        return re.sub(r'^\W*', '', summary[-1])

    def link_paths(self):
        """Where the bundle looks for its fixtures: /build/src/... (#filePath in the chroot)
        and /build/shared/traces beside it; qemu -L looks under the root first."""
        folder = os.path.join(self.root, 'build')
        os.makedirs(folder, exist_ok=True)
        links = {'src': '../../src', 'shared': os.path.realpath(os.path.join(ROOT_DIR, '..', 'shared'))}
        for name, target in links.items():
            path = os.path.join(folder, name)
            if os.path.islink(path):
                os.remove(path)
            os.symlink(target, path)

    # -- the table ------------------------------------------------------------------------------
    def table(self):
        width = max(len(row[0]) for row in self.rows)
        print()
        print(f'make arm64: aarch64-unknown-linux-gnu, Debian 13 swiftlang {self.o.swiftlang}, under {self.o.qemu}')
        print(f'  {"check":<{width}}  {"result":<6}  {"time":>7}  note')
        for name, result, seconds, note in self.rows:
            print(f'  {name:<{width}}  {result:<6}  {seconds:>6.1f}s  {note}')
        print()
        for path in (self.bluejay, self.gateway):
            described, needed = getattr(self, 'described', {}).get(path, ('?', []))
            print(f'  {os.path.relpath(path, ROOT_DIR)}: {os.path.getsize(path):,} bytes ({os.path.getsize(path) / 1e6:.1f} MB)')
            print(f'    file: {described}')
            print(f'    NEEDED: {", ".join(needed)}')
        print()
        print('  times:')
        for name, seconds in self.o.times:
            print(f'    {name:<58} {seconds:>6} s')
        print(f'    {"the checks above":<58} {sum(r[2] for r in self.rows):>6.0f} s')
        print()
        print('  test suites left out:')
        for suites, why in LEFT_OUT.items():
            print(f'    {suites}: {why}')
        failed = [row[0] for row in self.rows if row[1] != 'pass']
        print()
        print(f'make arm64: {len(self.rows) - len(failed)} of {len(self.rows)} checks passed'
              + (f'; FAILED: {", ".join(failed)}' if failed else ''))
        return not failed


def read_times(work, extra):
    """Build times: the phases run.sh timed, then the steps of build-inside.sh."""
    labels = {'copy': 'copy of the source', 'binaries': 'cross build: bluejay, bluejay-gateway (release)',
              'bench-aarch64': 'cross build: bluejay-bench (release)', 'bench-x86_64': 'x86 build: bluejay-bench (release)',
              'tests': 'cross build: the test bundle (debug)'}
    times = []
    for name in extra:
        path = os.path.join(work, name)
        if os.path.exists(path):
            with open(path) as file:
                for line in file:
                    key, _, seconds = line.rstrip('\n').rpartition(' ')
                    times.append((labels.get(key, key), seconds))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--python', required=True, help="the peer's Python (the pinned venv)")
    parser.add_argument('--x86', required=True, help="the host's bluejay, for trace output and serve's central")
    parser.add_argument('--work', default=os.path.join(ROOT_DIR, '.build/arm64'))
    parser.add_argument('--amd64-root', default=os.path.join(ROOT_DIR, '.build/debian13-amd64/root'))
    parser.add_argument('--bench-count', type=int, default=20000)
    parser.add_argument('--bench-runs', type=int, default=5)
    parser.add_argument('--only', nargs='*', help='run only these checks (by name prefix)')
    options = parser.parse_args()
    options.times = read_times(options.work, ['phases', 'times'])
    options.qemu = subprocess.run([QEMU, '--version'], capture_output=True, text=True).stdout.splitlines()[0]
    with open(os.path.join(options.work, 'root', '.bluejay-versions')) as file:
        options.swiftlang = file.read().split()[-1]

    checks = Checks(options)
    plan = [
        ('file bluejay', lambda: checks.binary(checks.bluejay)),
        ('file bluejay-gateway', lambda: checks.binary(checks.gateway)),
        ('peer: info', checks.info), ('peer: scan', checks.scan), ('peer: gatt', checks.gatt),
        ('peer: read', checks.read), ('peer: write', checks.write), ('peer: listen --count', checks.listen),
        ('peer: pair', checks.pair), ('serve, our x86 central reading', checks.serve),
        ('trace: byte-identical to x86', checks.traces),
        ('bench: receive path, aarch64/x86', checks.bench),
    ] + [(f'tests: {suite}', lambda suite=suite: checks.suite(suite)) for suite in LOWER_SUITES]
    checks.link_paths()
    for name, body in plan:
        if not options.only or any(name.startswith(prefix) for prefix in options.only):
            checks.check(name, body)
    sys.exit(0 if checks.table() else 1)


if __name__ == '__main__':
    main()
