#!/usr/bin/env python3
"""`make footprint`: where the bytes of the static `bluejay` go, and where its memory goes.

  size by component   every byte the stripped binary loads (allocated sections), from the
                      link map (gold's -Map): which object or archive member each input
                      section came from, grouped (Swift runtime, stdlib, FoundationEssentials,
                      BoringSSL, ArgumentParser, each of our modules, ...); what the linker
                      made itself (dynamic symbols, relocations, the unwind index) on its own rows
  RSS by cause        `bluejay listen` against the Bumble peer, idle and under its flood,
                      and `bluejay serve` with the Bumble central connected, reading and
                      subscribed (as bench.py's serve row): the largest sample of
                      /proc/PID/smaps, by cause (Fixtures/bench/rss.py), and the kernel's
                      high-water mark (VmHWM)

`bench.py` calls the same functions for bench/results.json.
"""
import argparse
import json
import os
import re
import struct
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rss  # noqa: E402

# Output sections that take no room in the file or are not loaded (stripped away).
NOT_LOADED = re.compile(r'^(\.debug|\.comment|\.symtab|\.strtab|\.shstrtab|\.note\.GNU-stack|\.bss|\.tbss|\.gnu_debuglink)')

OUR_MODULES = ['BluetoothCore', 'HCI', 'L2CAP', 'ATT', 'GATT', 'SMP', 'Storage', 'DiscoveryCache', 'BluetoothCrypto',
               'TraceDecoding', 'VirtualController', 'Bluejay', 'bluejay', 'CBluetooth']

# (component, pattern on the input file's path), first match wins.
COMPONENTS = [
    ('Swift runtime (libswiftCore C++: metadata, casts, demangler)', r'libswiftCore\.a\(.*\.cpp\.o\)'),
    ('Swift stdlib (libswiftCore Swift code)', r'libswiftCore\.a\('),
    ('Swift concurrency runtime', r'libswift_Concurrency\.a'),
    ('Swift string processing (Regex)', r'libswift_(StringProcessing|RegexParser)\.a'),
    ('Swift other libraries (Synchronization, Glibc, ...)', r'libswift\w*\.a'),
    ('Dispatch', r'lib(dispatch|BlocksRuntime|swiftDispatch)\.a'),
    ('FoundationEssentials', r'lib_?Foundation(Essentials|Collections|CShims)\.a'),
    ('Foundation (full), ICU', r'lib(_FoundationICU|Foundation|CoreFoundation|FoundationInternationalization)\.a'),
    ('BoringSSL (swift-crypto C)', r'/CCryptoBoringSSL(Shims)?\.build/'),
    ('swift-crypto Swift (Crypto, _CryptoExtras, SwiftASN1, Keccak)', r'/(Crypto|_CryptoExtras|CryptoBoringWrapper|CryptoExtras|SwiftASN1|CXKCP)\.build/'),
    ('ArgumentParser', r'/ArgumentParser\w*\.build/'),
    ('swift-log', r'/Logging\.build/'),
] + [(f'ours: {m}', rf'/{m}\.build/') for m in OUR_MODULES] + [
    ('C runtime start-up (crt, libc_nonshared)', r'(crt\w*\.o|libc_nonshared\.a|libgcc)'),
]


def component(path):
    for name, pattern in COMPONENTS:
        if re.search(pattern, path):
            return name
    return 'other: ' + os.path.basename(path)


def linker_made(label, section):
    if section in ('.dynsym', '.dynstr', '.gnu.hash', '.gnu.version', '.gnu.version_r', '.hash'):
        return 'linker: dynamic symbol table (--export-dynamic)'
    if section.startswith('.rela') or section.startswith('.relr'):
        return 'linker: dynamic relocations (position-independent)'
    if section == '.eh_frame_hdr':
        return 'linker: unwind index (.eh_frame_hdr)'
    if section == '.eh_frame':
        return 'unwind tables of all code (.eh_frame, merged by the linker)'
    if 'merge strings' in label:
        return 'string constants of all code (merged by the linker)'
    if 'fill' in label:
        return 'linker: alignment padding'
    return 'linker: headers, PLT, GOT, ...'


def map_inputs(map_path):
    """[(address, size, output section, component)] of every loaded input section of a
    link map, lld's (-Map) or gold's."""
    with open(map_path, errors='replace') as f:
        lines = f.read().split('\n')
    if lines[0].split()[:4] == ['VMA', 'LMA', 'Size', 'Align']:
        return _lld_inputs(lines)
    return _gold_inputs(lines)


def _lld_inputs(lines):
    inputs, section = [], None
    row = re.compile(r'^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+( +)(.*)$')
    for line in lines[1:]:
        match = row.match(line)
        if not match:
            continue
        address, size, depth, rest = int(match.group(1), 16), int(match.group(2), 16), len(match.group(3)), match.group(4)
        if depth <= 1:                      # an output section
            section = rest.strip()
            continue
        if depth > 9 or section is None or NOT_LOADED.match(section) or not size:
            continue                        # a symbol, or not loaded
        path, _, label = rest.strip().rpartition(':(')
        name = component(path) if path != '<internal>' else linker_made(label.rstrip(')'), section)
        inputs.append((address, size, section, name))
    return inputs


def _gold_inputs(lines):
    start = next(i for i, line in enumerate(lines) if line.startswith('Memory map') or line.startswith('Linker script and memory map'))
    inputs, section, pending = [], None, None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        if not line.startswith(' '):
            section = line.split()[0]
            pending = None
            continue
        if section is None or NOT_LOADED.match(section):
            continue
        tokens = line.split()
        hexes = [i for i, t in enumerate(tokens) if re.fullmatch(r'0x[0-9a-f]+', t)]
        if not hexes:
            pending = line.strip()          # a long input section name; its figures follow
            continue
        if len(hexes) < 2 or hexes[1] != hexes[0] + 1:
            continue                        # a symbol's address
        address, size = int(tokens[hexes[0]], 16), int(tokens[hexes[1]], 16)
        label = ' '.join(tokens[:hexes[0]]) or pending or ''
        path = ' '.join(tokens[hexes[1] + 1:])
        pending = None
        if size:
            inputs.append((address, size, section, component(path) if path else linker_made(label, section)))
    return inputs


def map_components(map_path):
    """{component: bytes} over the loaded sections of a link map, and {output section: bytes}."""
    components, sections = {}, {}
    for _, size, section, name in map_inputs(map_path):
        components[name] = components.get(name, 0) + size
        sections[section] = sections.get(section, 0) + size
    return components, sections


def pages_by_component(inputs, pages):
    """{component: resident bytes}: each resident page of the binary shared out among the
    input sections it holds, byte for byte ('linker: alignment padding' for the gaps)."""
    inputs = sorted(inputs)
    result, first = {}, 0
    for page in sorted(pages):
        end = page + 4096
        while first < len(inputs) and inputs[first][0] + inputs[first][1] <= page:
            first += 1
        covered = 0
        index = first
        while index < len(inputs) and inputs[index][0] < end:
            address, size, _, name = inputs[index]
            overlap = min(end, address + size) - max(page, address)
            if overlap > 0:
                result[name] = result.get(name, 0) + overlap
                covered += overlap
            index += 1
        if covered < 4096:
            result['linker: alignment padding'] = result.get('linker: alignment padding', 0) + 4096 - covered
    return result


def print_components(components, stripped_size):
    total = sum(components.values())
    ours = sum(v for k, v in components.items() if k.startswith('ours: '))
    print(f'static bluejay, stripped: {stripped_size:,} bytes ({stripped_size / 1e6:.1f} MB); '
          f'loaded sections by component (link map): {total:,} bytes')
    print(f'  {"component":<62} {"bytes":>12} {"share":>6}')
    rows = sorted(((k, v) for k, v in components.items() if not k.startswith('ours: ')), key=lambda kv: -kv[1])
    rows.append(('our modules (below)', ours))
    rows.sort(key=lambda kv: -kv[1])
    for name, size in rows:
        if size >= 20_000:
            print(f'  {name:<62} {size:>12,} {size / total:>6.1%}')
    small = sum(size for name, size in rows if size < 20_000)
    print(f'  {"the rest (each under 20 kB)":<62} {small:>12,} {small / total:>6.1%}')
    print('  our modules:')
    for name, size in sorted(((k, v) for k, v in components.items() if k.startswith('ours: ')), key=lambda kv: -kv[1]):
        print(f'    {name[6:]:<60} {size:>12,} {size / total:>6.1%}')
    print(f'  (the file is {stripped_size - total:+,} bytes beyond the sections: ELF headers and section alignment)')
    print()


def listen_rss(binary, transport, address, seconds, inputs=None, env=None):
    """{'idle': profile, 'flood': profile} of bluejay listen against the Bumble peer; with
    the link map's inputs, the binary's resident pages by component too."""
    env = dict(env or os.environ, BLUEJAY_STORE=tempfile.mkdtemp(prefix='bluejay-footprint-'))
    listen = [binary, 'listen', f'{address}/random', '--handle', '0x002B', '--transport', transport, '--duration', str(seconds)]
    flood_write = ['--write', '0x0029=01' + struct.pack('<IH', 0xFFFFFFFF, 244).hex()]
    result = {}
    for name, extra in (('idle', []), ('flood', flood_write)):
        profile = rss.profile(listen + extra, env)
        received = re.search(r'(\d+) values received', profile.pop('stderr'))
        profile['values_received'] = int(received.group(1)) if received else None
        pages = profile.pop('binary_pages')
        if inputs:
            profile['binary_pages_by_component'] = pages_by_component(inputs, pages)
        result[name] = profile
    return result


def serve_rss(binary, seconds, inputs=None, env=None):
    """The profile of `bluejay serve` (`peripheral.py`'s database: a value notified every 10
    ms) while the Bumble central is connected, has read and is subscribed, as `bench.py`'s
    serve row measures it; with the link map's inputs, the binary's resident pages by component."""
    import peripheral
    env = dict(env or os.environ, BLUEJAY_STORE=tempfile.mkdtemp(prefix='bluejay-footprint-'))
    central = peripheral.Central()
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as database:
        json.dump(peripheral.SERVED, database)
    argv = [binary, 'serve', database.name, '--transport', central.transport, '--duration', str(seconds + 2)]
    outcome = {}

    def run():
        try:
            outcome['profile'] = rss.profile(argv, env)
        except Exception as error:  # reported below, on the caller's thread
            outcome['error'] = error
    worker = threading.Thread(target=run)
    try:
        worker.start()
        handle = central.subscribe(peripheral.SERVED['name'], '2A6E')
        central.send(op='read', handle=handle)
        worker.join()
        received = len(central.send(op='values', handle=handle, count=1)['values'])
    finally:
        worker.join()
        central.stop()
        os.unlink(database.name)
    if 'error' in outcome:
        raise outcome['error']
    profile = outcome['profile']
    profile.pop('stderr')
    profile['notifying'] = received == 1
    pages = profile.pop('binary_pages')
    if inputs:
        profile['binary_pages_by_component'] = pages_by_component(inputs, pages)
    return profile


CAUSES = [('binary', 'binary pages touched'), ('libraries', 'shared libraries (glibc, libstdc++, libm)'),
          ('heap', 'heap (malloc arenas and large blocks)'), ('stacks', 'thread stacks'), ('other', 'other (vdso, ...)')]
DETAIL = [('binary_code_rodata', 'binary: code and read-only data'), ('binary_data', 'binary: writable data (relocated)'),
          ('heap_main_arena', 'heap: main arena'), ('heap_thread_arenas', 'heap: thread arenas'),
          ('heap_large_mmaps', 'heap: large blocks (read buffers, mmap)'), ('stacks_main', 'stacks: main thread'),
          ('stacks_threads', 'stacks: other threads')]


def print_rss(profiles, seconds, serve=None):
    """The listen profiles (idle, flood) side by side, and serve's beside them when given."""
    columns = [('listen idle', profiles['idle']), ('listen flood', profiles['flood'])] + ([('serve', serve)] if serve else [])
    flood = profiles['flood']

    def row(label, value):
        print(f'  {label:<58}' + ''.join(value(profile) for _, profile in columns))

    def megabytes(figure):
        return lambda profile: f' {figure(profile) / 1e6:>10.2f} MB'
    print(f'RSS of bluejay listen against the Bumble peer{" and of bluejay serve to the Bumble central" if serve else ""}'
          f' ({seconds} s each), at the largest sample, by cause')
    print(f'  {"cause":<58}' + ''.join(f' {name:>13}' for name, _ in columns))
    for key, label in CAUSES:
        row(label, megabytes(lambda profile, key=key: profile['causes'][key]))
    for key, label in DETAIL:
        row('  ' + label, megabytes(lambda profile, key=key: profile['detail'][key]))
    libraries = sorted({k for _, profile in columns for k in profile['detail'] if k.startswith('library ')},
                       key=lambda k: -flood['detail'].get(k, 0))
    for key in libraries:
        row('  libraries: ' + key[len('library '):], megabytes(lambda profile, key=key: profile['detail'].get(key, 0)))
    row('sum at that sample', megabytes(lambda profile: profile['sampled_peak_bytes']))
    row('peak (VmHWM, the kernel high-water mark)', megabytes(lambda profile: profile['vm_hwm_bytes']))
    row('threads', lambda profile: f' {profile["threads_max"]:>13}')
    row('values received (listen)', lambda profile: f' {profile.get("values_received") or 0:>13,}')
    if 'binary_pages_by_component' in flood:
        print('  binary pages touched, by component (/proc/PID/pagemap at that sample, placed by the link map):')
        names = {name for _, profile in columns for name in profile.get('binary_pages_by_component', {})}
        for name in sorted(names, key=lambda n: -max(p.get('binary_pages_by_component', {}).get(n, 0) for _, p in columns)):
            if max(p.get('binary_pages_by_component', {}).get(name, 0) for _, p in columns) >= 100_000:
                row('  ' + name, megabytes(lambda profile, name=name: profile.get('binary_pages_by_component', {}).get(name, 0)))
    print('  ru_maxrss is not used: Linux carries the parent\'s resident size into a child across exec, so a')
    print(f'  child of this Python process reports at least the Python process\'s own ({flood["ru_maxrss_bytes"] / 1e6:.1f} MB here).')
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--static', required=True, help='the stripped static bluejay')
    parser.add_argument('--map', required=True, help="the link map of its unstripped build (gold's -Map)")
    parser.add_argument('--seconds', type=int, default=20, help='seconds of listen, idle and flooded')
    parser.add_argument('--json', help='also write the figures here')
    options = parser.parse_args()
    import bench  # the Bumble peer's start-up
    components, sections = map_components(options.map)
    size = os.path.getsize(options.static)
    print_components(components, size)
    peer, transport, address = bench.start_peer()
    try:
        profiles = listen_rss(options.static, transport, address, options.seconds, map_inputs(options.map))
    finally:
        peer.terminate()
        peer.wait()
    serve = serve_rss(options.static, options.seconds, map_inputs(options.map))
    print_rss(profiles, options.seconds, serve)
    if options.json:
        with open(options.json, 'w') as out:
            json.dump({'static_binary_bytes': size, 'components': components, 'sections': sections, 'listen': profiles,
                       'serve': serve}, out, indent=2, sort_keys=True)


if __name__ == '__main__':
    main()
