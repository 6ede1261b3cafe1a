#!/usr/bin/env python3
"""Self-test of Fixtures/peer/peer.py.

Starts the peer as a subprocess (several times, with different options) and checks it
from the outside: a raw H4 client for the controller-level behaviour (legacy/extended
scanning, duplicate filtering, vendor opcodes, muted opcodes, buffer sizes, PHY, data
length, fragmentation, create-connection cancel) and a Bumble host over tcp-client for
the GATT database and the control point.  Also checks the btsnoop file with tshark and
the process lifetime (SIGTERM, parent death, stdin EOF).

Run:  .venv/bin/python Fixtures/peer/selftest.py [-k NAME] [--keep-logs]
Ends with a line 'N passed, N failed'; exit status 0 only if nothing failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from hang_guard import HANG_GUARD

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, 'peer.py')
PYTHON = sys.executable

ADDRESS = 'F0:0D:B1:E7:00:01'
NAME = 'Bluejay HRM'
ADV_DATA = bytes.fromhex('020106' '05030d180f18' '05ffffffb1e7')
SCAN_RSP = (bytes([len(NAME) + 1, 0x09]) + NAME.encode()
            + bytes([17, 0x07]) + bytes.fromhex('B1E700019D3B4C7A8A5E6F2D0C1B0A00')[::-1])


def custom(short: int) -> str:
    return f'B1E7{short:04X}-9D3B-4C7A-8A5E-6F2D0C1B0A00'


# -----------------------------------------------------------------------------
class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.notes: list[str] = []

    def check(self, name: str, condition: bool, detail: str = '') -> bool:
        if condition:
            self.passed += 1
            print(f'PASS {name}' + (f' ({detail})' if detail else ''), flush=True)
        else:
            self.failed += 1
            print(f'FAIL {name}' + (f': {detail}' if detail else ''), flush=True)
        return condition

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f'NOTE {text}', flush=True)


R = Results()


# -----------------------------------------------------------------------------
class PeerProcess:
    '''The peer as a subprocess; waits for the READY line.'''

    def __init__(self, *extra: str, log_dir: str, tag: str, stdin=subprocess.DEVNULL):
        self.log_path = os.path.join(log_dir, f'peer-{tag}.log')
        self.log = open(self.log_path, 'wb')
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [PYTHON, PEER, *extra], stdout=subprocess.PIPE, stderr=self.log, stdin=stdin)
        line = self._read_line(timeout=HANG_GUARD)
        self.ready_seconds = time.monotonic() - self.started
        self.ready_line = line
        fields = dict(part.split('=', 1) for part in line.split(' ')[1:4])
        self.transport = fields['transport']
        if self.transport.startswith('tcp:'):
            self.port = int(self.transport.rsplit(':', 1)[1])
        else:
            self.port = None

    def _read_line(self, timeout: float) -> str:
        import select
        deadline = time.monotonic() + timeout
        data = b''
        fd = self.process.stdout.fileno()
        while not data.endswith(b'\n'):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError('no READY line')
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                chunk = os.read(fd, 1)
                if not chunk:
                    raise RuntimeError(f'peer exited before READY (see {self.log_path})')
                data += chunk
        return data.decode().rstrip('\n')

    @property
    def bumble_transport(self) -> str:
        if self.port is not None:
            return f'tcp-client:127.0.0.1:{self.port}'
        return 'unix:' + self.transport.split(':', 1)[1]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode

    def stderr_text(self) -> str:
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, 'rb') as f:
            return f.read().decode(errors='replace')


# -----------------------------------------------------------------------------
# Raw H4 client
# -----------------------------------------------------------------------------
class RawHci:
    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.packets: asyncio.Queue = asyncio.Queue()
        self.task = asyncio.get_running_loop().create_task(self._pump())
        self.eof = asyncio.Event()

    @classmethod
    async def connect(cls, port: int) -> 'RawHci':
        reader, writer = await asyncio.open_connection('127.0.0.1', port)
        return cls(reader, writer)

    async def _pump(self):
        try:
            while True:
                kind = await self.reader.readexactly(1)
                if kind[0] == 0x04:
                    head = await self.reader.readexactly(2)
                    body = await self.reader.readexactly(head[1])
                    await self.packets.put(kind + head + body)
                elif kind[0] == 0x02:
                    head = await self.reader.readexactly(4)
                    body = await self.reader.readexactly(struct.unpack_from('<H', head, 2)[0])
                    await self.packets.put(kind + head + body)
                else:
                    raise RuntimeError(f'unexpected H4 type {kind[0]}')
        except (asyncio.IncompleteReadError, ConnectionError):
            self.eof.set()

    def send_command(self, opcode: int, params: bytes = b'') -> None:
        self.writer.write(struct.pack('<BHB', 1, opcode, len(params)) + params)

    def send_acl(self, handle: int, data: bytes, pb: int = 0) -> None:
        self.writer.write(struct.pack('<BHH', 2, handle | (pb << 12), len(data)) + data)

    async def next(self, timeout: float = HANG_GUARD):
        return await asyncio.wait_for(self.packets.get(), timeout)

    async def collect(self, seconds: float) -> list[bytes]:
        out = []
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return out
            try:
                out.append(await asyncio.wait_for(self.packets.get(), remaining))
            except asyncio.TimeoutError:
                return out

    async def wait_event(self, predicate, timeout: float = HANG_GUARD) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                packet = await asyncio.wait_for(self.packets.get(), remaining)
            except asyncio.TimeoutError:
                return None
            if predicate(packet):
                return packet

    async def command(self, opcode: int, params: bytes = b'', timeout: float = HANG_GUARD):
        '''Send a command; return the CC/CS for it (other packets are dropped).'''
        self.send_command(opcode, params)
        return await self.wait_event(lambda p: is_response_to(p, opcode), timeout)

    def close(self):
        self.task.cancel()
        self.writer.close()


def is_response_to(packet: bytes, opcode: int) -> bool:
    if packet[0] != 0x04:
        return False
    if packet[1] == 0x0E:
        return struct.unpack_from('<H', packet, 4)[0] == opcode
    if packet[1] == 0x0F:
        return struct.unpack_from('<H', packet, 5)[0] == opcode
    return False


def le_meta(packet: bytes, subevent: int) -> bool:
    return packet[0] == 0x04 and packet[1] == 0x3E and packet[3] == subevent


def parse_legacy_reports(packets):
    reports = []
    for p in packets:
        if le_meta(p, 0x02):
            n = p[4]
            offset = 5
            for _ in range(n):
                event_type, address_type = p[offset], p[offset + 1]
                address = p[offset + 2:offset + 8]
                length = p[offset + 8]
                data = p[offset + 9:offset + 9 + length]
                reports.append((event_type, address_type, address, data))
                offset += 10 + length
    return reports


def parse_extended_reports(packets):
    reports = []
    for p in packets:
        if le_meta(p, 0x0D):
            n = p[4]
            offset = 5
            for _ in range(n):
                event_type = struct.unpack_from('<H', p, offset)[0]
                address_type = p[offset + 2]
                address = p[offset + 3:offset + 9]
                sid = p[offset + 11]
                length = p[offset + 23]
                data = p[offset + 24:offset + 24 + length]
                reports.append((event_type, address_type, address, data, sid))
                offset += 24 + length
    return reports


PEER_ADDRESS_BYTES = bytes.fromhex(ADDRESS.replace(':', ''))[::-1]


async def raw_controller_tests(peer: PeerProcess, acl_len: int, acl_count: int) -> None:
    hci = await RawHci.connect(peer.port)
    try:
        cc = await hci.command(0x0C03)  # Reset
        R.check('raw: HCI Reset -> Command Complete success',
                cc is not None and cc[1] == 0x0E and cc[6] == 0, repr(cc))

        cs = await hci.command(0xFC77, b'\x01\x02')
        R.check('raw: vendor opcode 0xFC77 -> Command Status 0x01',
                cs is not None and cs[1] == 0x0F and cs[3] == 0x01, repr(cs and cs.hex()))

        cs = await hci.command(0x0412)  # unknown OGF 1 command (no handler, no params)
        R.check('raw: unknown opcode 0x0412 -> Command Status 0x01',
                cs is not None and cs[1] == 0x0F and cs[3] == 0x01, repr(cs and cs.hex()))

        cc = await hci.command(0x1408, b'\x01\x00')  # Read Encryption Key Size: not emulated
        R.check('raw: known sync command without emulation -> Command Status 0x01',
                cc is not None and cc[1] == 0x0F and cc[3] == 0x01, repr(cc and cc.hex()))

        # Silence is the check: a short window of its own, not a wait.
        response = await hci.command(0x0C35, bytes([1, 1, 0, 1, 0]), timeout=0.5)
        R.check('raw: Host Number Of Completed Packets gets no response', response is None,
                repr(response and response.hex()))

        cc = await hci.command(0x2002)  # LE Read Buffer Size
        R.check('raw: LE Read Buffer Size reports --acl-len-a/--acl-count-a',
                cc is not None and struct.unpack_from('<HB', cc, 7) == (acl_len, acl_count),
                repr(cc and cc.hex()))
        cc = await hci.command(0x2060)  # LE Read Buffer Size v2
        R.check('raw: LE Read Buffer Size v2 reports them too',
                cc is not None and struct.unpack_from('<HB', cc, 7) == (acl_len, acl_count),
                repr(cc and cc.hex()))
        cc = await hci.command(0x1005)  # Read Buffer Size
        R.check('raw: Read Buffer Size reports them too',
                cc is not None and struct.unpack_from('<H', cc, 7)[0] == acl_len
                and struct.unpack_from('<H', cc, 10)[0] == acl_count, repr(cc and cc.hex()))

        # Legacy passive scan, duplicates filtered: one ADV_IND report, no scan response.
        await hci.command(0x200B, struct.pack('<BHHBB', 0, 0x10, 0x10, 0, 0))
        await hci.command(0x200C, bytes([1, 1]))
        packets = await hci.collect(1.0)
        await hci.command(0x200C, bytes([0, 0]))
        ours = [r for r in parse_legacy_reports(packets) if r[2] == PEER_ADDRESS_BYTES]
        ext = parse_extended_reports(packets)
        R.check('raw: legacy passive scan, filter dup -> exactly one legacy ADV_IND report',
                len(ours) == 1 and ours[0][0] == 0 and ours[0][1] == 1
                and ours[0][3] == ADV_DATA and not ext,
                f'{len(ours)} reports, {len(ext)} extended')

        # Legacy active scan, no duplicate filtering: ADV_IND + the real scan response.
        await hci.command(0x200B, struct.pack('<BHHBB', 1, 0x10, 0x10, 0, 0))
        await hci.command(0x200C, bytes([1, 0]))
        packets = await hci.collect(0.6)
        await hci.command(0x200C, bytes([0, 0]))
        ours = [r for r in parse_legacy_reports(packets) if r[2] == PEER_ADDRESS_BYTES]
        adv = [r for r in ours if r[0] == 0]
        rsp = [r for r in ours if r[0] == 4]
        R.check('raw: legacy active scan -> ADV_IND and SCAN_RSP with the real scan response',
                len(adv) >= 3 and len(rsp) >= 3 and all(r[3] == ADV_DATA for r in adv)
                and all(r[3] == SCAN_RSP for r in rsp),
                f'{len(adv)} ADV_IND, {len(rsp)} SCAN_RSP')

        # Extended active scan, filter duplicates: one ADV + one SCAN_RSP, legacy bit set.
        await hci.command(0x2041, struct.pack('<BBBBHH', 0, 0, 0x01, 1, 0x10, 0x10))
        await hci.command(0x2042, struct.pack('<BBHH', 1, 1, 0, 0))
        packets = await hci.collect(1.0)
        await hci.command(0x2042, struct.pack('<BBHH', 0, 0, 0, 0))
        ours = [r for r in parse_extended_reports(packets) if r[2] == PEER_ADDRESS_BYTES]
        types = sorted(r[0] for r in ours)
        R.check('raw: extended active scan, filter dup -> 0x0013 (ADV_IND) + 0x001B (SCAN_RSP)',
                types == [0x13, 0x1B]
                and all(r[3] == (SCAN_RSP if r[0] & 8 else ADV_DATA) for r in ours)
                and all(r[4] == 0xFF for r in ours)
                and not parse_legacy_reports(packets),
                f'types {[hex(t) for t in types]}')

        # Extended scan with a duration ends with LE Scan Timeout.
        await hci.command(0x2042, struct.pack('<BBHH', 1, 1, 20, 0))  # 200 ms
        timeout_event = await hci.wait_event(lambda p: le_meta(p, 0x11))
        R.check('raw: extended scan duration -> LE Scan Timeout', timeout_event is not None)

        # LE Create Connection to nobody, then cancel: CC success, then LE Connection
        # Complete with status 0x02.
        nobody = bytes.fromhex('C0FFEE000099')
        create = struct.pack('<HHBB', 0x10, 0x10, 0, 1) + nobody + struct.pack(
            '<BHHHHHH', 0, 24, 40, 0, 72, 0, 0)
        cs = await hci.command(0x200D, create)
        R.check('raw: LE Create Connection -> Command Status pending',
                cs is not None and cs[1] == 0x0F and cs[3] == 0, repr(cs and cs.hex()))
        hci.send_command(0x200E)
        first = await hci.wait_event(
            lambda p: is_response_to(p, 0x200E) or le_meta(p, 0x01))
        second = await hci.wait_event(lambda p: le_meta(p, 0x01))
        R.check('raw: LE Create Connection Cancel -> CC, then LE Connection Complete 0x02',
                first is not None and first[1] == 0x0E and first[6] == 0
                and second is not None and second[4] == 0x02,
                f'{first and first.hex()} / {second and second.hex()}')
        cc = await hci.command(0x200E)
        R.check('raw: cancel without a pending connection -> Command Disallowed',
                cc is not None and cc[6] == 0x0C, repr(cc and cc.hex()))

        # Connect to the peripheral (own address PUBLIC).
        create = struct.pack('<HHBB', 0x10, 0x10, 0, 1) + PEER_ADDRESS_BYTES + struct.pack(
            '<BHHHHHH', 0, 24, 40, 0, 72, 0, 0)
        await hci.command(0x200D, create)
        complete = await hci.wait_event(lambda p: le_meta(p, 0x01))
        ok = R.check('raw: LE Create Connection to the peripheral -> connected',
                     complete is not None and complete[4] == 0, repr(complete and complete.hex()))
        if not ok:
            return
        handle = struct.unpack_from('<H', complete, 5)[0]

        # ATT MTU 247, then Read By Group Type (primary services) before DLE: the
        # 36-byte response PDU is fragmented to 27.
        hci.send_acl(handle, struct.pack('<HHBH', 3, 4, 0x02, 247))
        mtu_response = await collect_acl_pdu(hci, handle)
        R.check('raw: ATT Exchange MTU over raw ACL',
                len(mtu_response) == 1 and mtu_response[0][9] == 0x03,
                repr([f.hex() for f in mtu_response]))
        request = struct.pack('<HHBHHH', 7, 4, 0x10, 1, 0xFFFF, 0x2800)
        hci.send_acl(handle, request)
        fragments = await collect_acl_pdu(hci, handle)
        sizes = [len(f) - 5 for f in fragments]
        R.check('raw: ACL from the peripheral is fragmented to 27 bytes before DLE',
                len(fragments) >= 2 and max(sizes) == 27
                and fragments[0][2] >> 4 == 0x2 and all(f[2] >> 4 == 0x1 for f in fragments[1:]),
                f'fragment sizes {sizes}')

        cc = await hci.command(0x2022, struct.pack('<HHH', handle, 251, 2120))
        change = await hci.wait_event(lambda p: le_meta(p, 0x07))
        R.check('raw: LE Set Data Length -> CC success + LE Data Length Change 251',
                cc is not None and cc[6] == 0 and change is not None
                and struct.unpack_from('<HHHHH', change, 4) == (handle, 251, 2120, 251, 2120),
                f'{cc and cc.hex()} / {change and change.hex()}')
        cc = await hci.command(0x202F)
        R.check('raw: LE Read Maximum Data Length -> 251/2120',
                cc is not None and struct.unpack_from('<HHHH', cc, 7) == (251, 2120, 251, 2120),
                repr(cc and cc.hex()))
        hci.send_acl(handle, request)
        fragments = await collect_acl_pdu(hci, handle)
        sizes = [len(f) - 5 for f in fragments]
        R.check('raw: after DLE a 36+ byte PDU arrives in one ACL packet',
                len(fragments) == 1, f'fragment sizes {sizes}')

        cs = await hci.command(0x2032, struct.pack('<HBBBH', handle, 0, 0b010, 0b010, 0))
        phy = await hci.wait_event(lambda p: le_meta(p, 0x0C))
        R.check('raw: LE Set PHY -> Command Status + LE PHY Update Complete 2M',
                cs is not None and cs[1] == 0x0F and cs[3] == 0 and phy is not None
                and phy[4] == 0 and phy[7:9] == bytes([2, 2]),
                f'{cs and cs.hex()} / {phy and phy.hex()}')
        cc = await hci.command(0x2030, struct.pack('<H', handle))
        R.check('raw: LE Read PHY reflects 2M',
                cc is not None and cc[6] == 0 and cc[9:11] == bytes([2, 2]), repr(cc and cc.hex()))
        cs = await hci.command(0x2032, struct.pack('<HBBBH', 0x0EEE, 0, 1, 1, 0))
        R.check('raw: LE Set PHY on an unknown handle -> Command Status 0x02',
                cs is not None and cs[1] == 0x0F and cs[3] == 0x02, repr(cs and cs.hex()))

        cs = await hci.command(0x0406, struct.pack('<HB', handle, 0x13))
        done = await hci.wait_event(lambda p: p[0] == 4 and p[1] == 0x05)
        R.check('raw: HCI Disconnect -> Disconnection Complete',
                done is not None and done[3] == 0 and done[6] == 0x13, repr(done and done.hex()))
    finally:
        hci.close()


async def collect_acl_pdu(hci: RawHci, handle: int, timeout: float = HANG_GUARD) -> list[bytes]:
    '''ACL fragments of the next L2CAP PDU on handle.'''
    fragments = []
    total = None
    received = 0
    deadline = time.monotonic() + timeout
    while total is None or received < total:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            packet = await hci.next(remaining)
        except asyncio.TimeoutError:
            break
        if packet[0] != 0x02 or struct.unpack_from('<H', packet, 1)[0] & 0xFFF != handle:
            continue
        data = packet[5:]
        if total is None:
            if struct.unpack_from('<H', packet, 1)[0] >> 12 & 3 != 2:
                continue
            total = struct.unpack_from('<H', data, 0)[0] + 4
        fragments.append(packet)
        received += len(data)
    return fragments


async def mute_test(log_dir: str) -> None:
    peer = PeerProcess('--mute-opcode', '0x1001', '--mute-opcode', '0x0C14',
                       log_dir=log_dir, tag='mute')
    try:
        hci = await RawHci.connect(peer.port)
        await hci.command(0x0C03)
        # Silence is the check: a short window of its own, not a wait.
        response = await hci.command(0x1001, timeout=1.5)
        R.check('mute: muted Read Local Version gets no answer', response is None)
        response = await hci.command(0x1009)  # Read BD_ADDR still answered
        R.check('mute: other commands still answered',
                response is not None and response[6] == 0, repr(response and response.hex()))
        hci.close()
    finally:
        peer.stop()


# -----------------------------------------------------------------------------
# Bumble host (GATT) tests
# -----------------------------------------------------------------------------
async def bumble_session(peer: PeerProcess, first: bool) -> None:
    from bumble import att, hci
    from bumble.core import UUID
    from bumble.device import Device, Peer
    from bumble.transport import open_transport

    tag = 'session 1' if first else 'session 2'
    target = hci.Address(ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
    async with await open_transport(peer.bumble_transport) as (source, sink):
        device = Device.with_hci('selftest', hci.Address('C0:FF:EE:00:00:01'), source, sink)
        await device.power_on()

        # Scan (Bumble uses extended scanning here since the feature bit is set).
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            if advertisement.address == target and not found.done():
                structures = dict((int(t), bytes(v))
                                  for t, v in advertisement.data.ad_structures)
                if 0x09 in structures:
                    found.set_result((advertisement, structures))

        device.on('advertisement', on_advertisement)
        t0 = time.monotonic()
        await device.start_scanning(active=True)
        try:
            advertisement, structures = await asyncio.wait_for(found, HANG_GUARD)
        except asyncio.TimeoutError:
            R.check(f'{tag}: scan finds the peripheral', False, 'nothing found')
            return
        await device.stop_scanning()
        R.check(f'{tag}: scan: name, 16-bit UUIDs, manufacturer data, 128-bit UUID',
                structures.get(0x09) == NAME.encode()
                and structures.get(0x03) == bytes.fromhex('0d180f18')
                and structures.get(0xFF) == bytes.fromhex('ffffb1e7')
                and structures.get(0x07) == SCAN_RSP[-16:]
                and structures.get(0x01) == b'\x06'
                and advertisement.is_connectable,
                f'found in {1000 * (time.monotonic() - t0):.0f} ms')

        own = hci.OwnAddressType.PUBLIC if first else hci.OwnAddressType.RANDOM
        connection = await device.connect(target, own_address_type=own, timeout=HANG_GUARD)
        R.check(f'{tag}: connected (own address {own.name})', connection is not None)
        peer_ = Peer(connection)
        mtu = await peer_.request_mtu(247)
        R.check(f'{tag}: MTU exchange -> 247', mtu == 247, f'mtu {mtu}')

        t0 = time.monotonic()
        await peer_.discover_all()
        discovery_ms = 1000 * (time.monotonic() - t0)

        def char(uuid):
            found_ = peer_.get_characteristics_by_uuid(UUID(uuid))
            return found_[0] if found_ else None

        expected = {
            '180D': ['2A37', '2A38'], '180A': ['2A29', '2A25'], '180F': ['2A19'],
            custom(1): [custom(n) for n in range(2, 9)],
            '1800': ['2A00'], '1801': ['2A05', '2B29', '2B2A'],
        }
        missing = []
        for service_uuid, characteristic_uuids in expected.items():
            if not peer_.get_services_by_uuid(UUID(service_uuid)):
                missing.append(service_uuid)
            for c in characteristic_uuids:
                if char(c) is None:
                    missing.append(c)
        R.check(f'{tag}: discovery finds every service and characteristic', not missing,
                f'{len(peer_.services)} services in {discovery_ms:.0f} ms'
                if not missing else f'missing {missing}')
        if missing:
            return

        async def att_error(coro):
            try:
                await coro
            except att.ATT_Error as error:
                return int(error.error_code)
            return None

        value = await peer_.read_value(char('2A29'))
        R.check(f'{tag}: read 0x2A29 = "Bluejay"', value == b'Bluejay', repr(value))
        R.check(f'{tag}: read 0x2A25 = "BJ-0001"',
                await peer_.read_value(char('2A25')) == b'BJ-0001')
        R.check(f'{tag}: read 0x2A19 = 87', await peer_.read_value(char('2A19')) == bytes([87]))
        R.check(f'{tag}: read 0x2A38 = 0x01', await peer_.read_value(char('2A38')) == b'\x01')

        long_value = await peer_.read_value(char(custom(2)))
        R.check(f'{tag}: read long 512-byte value (initial i % 256)',
                long_value == bytes(i % 256 for i in range(512)),
                f'{len(long_value)} bytes')

        if first:
            new_value = bytes((255 - i) % 256 for i in range(512))
            await peer_.write_value(char(custom(2)), new_value, with_response=True)
            back = await peer_.read_value(char(custom(2)))
            R.check(f'{tag}: long write 512 bytes + read back', back == new_value,
                    f'{len(back)} bytes')
            error = await att_error(peer_.gatt_client.write_long_value(
                char(custom(2)).handle, bytes(600)))
            R.check(f'{tag}: 600-byte long write rejected with 0x0D', error == 0x0D, repr(error))
            error = await att_error(peer_.write_value(char(custom(8)), b'x', with_response=True))
            R.check(f'{tag}: write to read-only 0008 -> 0x03', error == 0x03, repr(error))
            error = await att_error(peer_.write_value(char('2A29'), b'x', with_response=True))
            R.check(f'{tag}: write to 0x2A29 -> 0x03', error == 0x03, repr(error))
            error = await att_error(peer_.read_value(char(custom(7))))
            R.check(f'{tag}: read of notify-only 0007 -> 0x02', error == 0x02, repr(error))
            error = await att_error(peer_.read_value(char(custom(4))))
            R.check(f'{tag}: read of encrypted 0004 unencrypted -> 0x0F', error == 0x0F,
                    repr(error))
            R.check(f'{tag}: read of 0008',
                    await peer_.read_value(char(custom(8))) == b'Bluejay read-only')
            error = await att_error(peer_.write_value(char('2A38'), b'\x01\x02',
                                                      with_response=True))
            R.check(f'{tag}: 2-byte write to 0x2A38 -> 0x0D', error == 0x0D, repr(error))
            await peer_.write_value(char('2A38'), b'\x03', with_response=True)
            R.check(f'{tag}: write+read 0x2A38',
                    await peer_.read_value(char('2A38')) == b'\x03')
            error = await att_error(peer_.write_value(char(custom(6)), b'\x7f',
                                                      with_response=True))
            R.check(f'{tag}: unknown control point command -> 0x80', error == 0x80, repr(error))
            error = await att_error(peer_.write_value(
                char(custom(6)), b'\x01' + struct.pack('<IH', 10, 20), with_response=True))
            R.check(f'{tag}: flood without subscription -> 0xFD', error == 0xFD, repr(error))
            error = await att_error(peer_.write_value(char(custom(5)), b'x', with_response=True))
            R.check(f'{tag}: Write Request to echo (write-without-response only) -> 0x03',
                    error == 0x03, repr(error))
        else:
            R.check(f'{tag}: GATT values were reset for the new host',
                    long_value == bytes(i % 256 for i in range(512))
                    and await peer_.read_value(char('2A38')) == b'\x01')

        # Echo.
        echoes = []
        echo_done = asyncio.Event()

        def on_echo(value):
            echoes.append(bytes(value))
            if len(echoes) == 20:
                echo_done.set()

        await peer_.subscribe(char(custom(5)), on_echo)
        sent = [bytes([i]) * (1 + i * 11 % 200) for i in range(20)]
        for value in sent:
            await peer_.write_value(char(custom(5)), value, with_response=False)
        try:
            await asyncio.wait_for(echo_done.wait(), HANG_GUARD)
        except asyncio.TimeoutError:
            pass
        R.check(f'{tag}: echo: 20 writes without response come back in order',
                echoes == sent, f'{len(echoes)} echoes')

        # Flood.
        count, length = (2000, 100)
        received = []
        flood_done = asyncio.Event()

        def on_stream(value):
            received.append(bytes(value))
            if len(received) == count:
                flood_done.set()

        await peer_.subscribe(char(custom(7)), on_stream)
        t0 = time.monotonic()
        await peer_.write_value(char(custom(6)), b'\x01' + struct.pack('<IH', count, length),
                                with_response=True)
        try:
            await asyncio.wait_for(flood_done.wait(), HANG_GUARD)
        except asyncio.TimeoutError:
            pass
        elapsed = time.monotonic() - t0
        in_order = all(len(v) == length and struct.unpack_from('<I', v)[0] == i
                       for i, v in enumerate(received))
        R.check(f'{tag}: flood {count} x {length} B complete and in order',
                len(received) == count and in_order,
                f'{len(received)} received in {elapsed:.3f} s = {count / elapsed:.0f}/s '
                '(Bumble host receiving)')
        R.note(f'{tag}: flood {count}x{length}B received by a Bumble host: '
               f'{count / elapsed:.0f} notifications/s')
        await asyncio.sleep(0.2)
        R.check(f'{tag}: flood sends nothing extra', len(received) == count)

        # Indication.
        indications = []
        indicated = asyncio.Event()

        def on_indication(value):
            indications.append(bytes(value))
            indicated.set()

        await peer_.subscribe(char(custom(3)), on_indication, prefer_notify=False)
        await peer_.write_value(char(custom(6)), b'\x04hello', with_response=True)
        try:
            await asyncio.wait_for(indicated.wait(), HANG_GUARD)
        except asyncio.TimeoutError:
            pass
        R.check(f'{tag}: control 0x04 -> indication on 0003', indications == [b'hello'],
                repr(indications))
        R.check(f'{tag}: 0003 reads back the indicated value',
                await peer_.read_value(char(custom(3))) == b'hello')

        if first:
            # Service Changed.
            changes = []
            changed = asyncio.Event()

            def on_service_changed(value):
                changes.append(bytes(value))
                changed.set()

            await peer_.subscribe(char('2A05'), on_service_changed, prefer_notify=False)
            await peer_.write_value(char(custom(6)), b'\x06' + struct.pack('<HH', 1, 0xFFFF),
                                    with_response=True)
            try:
                await asyncio.wait_for(changed.wait(), HANG_GUARD)
            except asyncio.TimeoutError:
                pass
            R.check(f'{tag}: control 0x06 -> Service Changed indication',
                    changes == [struct.pack('<HH', 1, 0xFFFF)], repr(changes))

            # Heart rate.
            beats = []
            await peer_.subscribe(char('2A37'), lambda v: beats.append(bytes(v)))
            await peer_.write_value(char(custom(6)), b'\x05\x01', with_response=True)
            await asyncio.sleep(2.4)
            await peer_.write_value(char(custom(6)), b'\x05\x00', with_response=True)
            n = len(beats)
            await asyncio.sleep(1.2)
            R.check(f'{tag}: heart rate 1 Hz notifications, stop works',
                    n >= 2 and len(beats) == n and all(b[0] == 0 and len(b) == 2 for b in beats)
                    and all(beats[i + 1][1] == beats[i][1] + 1 for i in range(n - 1)),
                    repr(beats))

            # Connection parameter update request from the peripheral.
            updated = asyncio.get_running_loop().create_future()
            connection.on('connection_parameters_update',
                          lambda *a: updated.done() or updated.set_result(connection.parameters))
            await peer_.write_value(char(custom(6)), b'\x03' + struct.pack('<HHHH', 24, 40, 0, 400),
                                    with_response=True)
            try:
                parameters = await asyncio.wait_for(updated, HANG_GUARD)
            except asyncio.TimeoutError:
                parameters = None
            R.check(f'{tag}: control 0x03 -> L2CAP update request handled by the host',
                    parameters is not None, repr(parameters))

            # PHY and data length through Bumble's API.
            try:
                await connection.set_phy(tx_phys=[hci.HCI_LE_2M_PHY], rx_phys=[hci.HCI_LE_2M_PHY])
                await asyncio.sleep(0.1)
                phy = await connection.get_phy()
                R.check(f'{tag}: set/get PHY 2M through Bumble', (phy.tx_phy, phy.rx_phy) == (2, 2),
                        repr(phy))
            except Exception as error:
                R.check(f'{tag}: set/get PHY 2M through Bumble', False, repr(error))

        # Disconnect through the control point with a chosen reason.
        reason = 0x08 if first else 0x13
        disconnected = asyncio.get_running_loop().create_future()
        connection.on('disconnection', lambda r: disconnected.done() or disconnected.set_result(r))
        await peer_.write_value(char(custom(6)), bytes([0x02, reason]), with_response=True)
        try:
            got = await asyncio.wait_for(disconnected, HANG_GUARD)
        except asyncio.TimeoutError:
            got = None
        R.check(f'{tag}: control 0x02 -> host sees disconnection reason 0x{reason:02X}',
                got == reason, repr(got))

        if not first:
            # A second simultaneous host connection is closed by the peer.
            reader, writer = await asyncio.open_connection('127.0.0.1', peer.port)
            try:
                data = await asyncio.wait_for(reader.read(1), HANG_GUARD)
                R.check('second simultaneous connection is closed', data == b'')
            except asyncio.TimeoutError:
                R.check('second simultaneous connection is closed', False, 'still open')
            finally:
                writer.close()


# -----------------------------------------------------------------------------
# Raw GATT helpers (for the fast tap and reset tests)
# -----------------------------------------------------------------------------
async def raw_connect(hci: RawHci, address: bytes = PEER_ADDRESS_BYTES) -> int | None:
    create = struct.pack('<HHBB', 0x10, 0x10, 0, 1) + address + struct.pack(
        '<BHHHHHH', 0, 24, 40, 0, 72, 0, 0)
    await hci.command(0x200D, create)
    complete = await hci.wait_event(lambda p: le_meta(p, 0x01))
    if complete is None or complete[4] != 0:
        return None
    return struct.unpack_from('<H', complete, 5)[0]


async def raw_att(hci: RawHci, handle: int, pdu: bytes, timeout: float = HANG_GUARD) -> bytes:
    hci.send_acl(handle, struct.pack('<HH', len(pdu), 4) + pdu)
    fragments = await collect_acl_pdu(hci, handle, timeout)
    return b''.join(f[5:] for f in fragments)[4:]


async def raw_characteristics(hci: RawHci, handle: int) -> dict[str, int]:
    """UUID (upper-case string) -> value handle, via Read By Type 0x2803."""
    result = {}
    start = 1
    while start <= 0xFFFF:
        response = await raw_att(hci, handle, struct.pack('<BHHH', 0x08, start, 0xFFFF, 0x2803))
        if not response or response[0] != 0x09:
            break
        length = response[1]
        last = start
        for offset in range(2, len(response), length):
            entry = response[offset:offset + length]
            declaration, _properties, value_handle = struct.unpack_from('<HBH', entry)
            raw_uuid = entry[5:]
            if len(raw_uuid) == 2:
                uuid = f'{struct.unpack("<H", raw_uuid)[0]:04X}'
            else:
                h = raw_uuid[::-1].hex().upper()
                uuid = f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'
            result[uuid] = value_handle
            last = declaration
        start = last + 1
    return result


async def fast_tap_flood(log_dir: str) -> None:
    """The peer's own flood rate, read by a raw tap that only counts."""
    peer = PeerProcess(log_dir=log_dir, tag='fasttap')
    try:
        hci = await RawHci.connect(peer.port)
        await hci.command(0x0C03)
        handle = await raw_connect(hci)
        if handle is None:
            R.check('fast tap: connected', False)
            return
        await raw_att(hci, handle, struct.pack('<BH', 0x02, 247))
        await hci.command(0x2022, struct.pack('<HHH', handle, 251, 2120))
        await hci.collect(0.1)
        chars = await raw_characteristics(hci, handle)
        stream, control = chars.get(custom(7)), chars.get(custom(6))
        if stream is None or control is None:
            R.check('fast tap: raw discovery', False, repr(chars))
            return
        response = await raw_att(hci, handle, struct.pack('<BHH', 0x12, stream + 1, 1))
        R.check('fast tap: subscribe to 0007 over raw ATT', response == b'\x13', response.hex())
        for count, length in ((100000, 244), (100000, 20)):
            # Take over the socket: stop the packet pump, count notifications directly.
            hci.task.cancel()
            await asyncio.sleep(0)
            reader = hci.reader
            hci.send_acl(handle, struct.pack('<HHBHB', 10, 4, 0x12, control, 0x01)
                         + struct.pack('<IH', count, length))
            buffer = bytearray()
            seen = 0
            in_order = True
            got_write_response = False
            t0 = time.monotonic()
            deadline = t0 + HANG_GUARD
            while seen < count and time.monotonic() < deadline:
                chunk = await asyncio.wait_for(reader.read(1 << 20), HANG_GUARD)
                if not chunk:
                    break
                buffer += chunk
                offset = 0
                n = len(buffer)
                while True:
                    if n - offset < 3:
                        break
                    kind = buffer[offset]
                    if kind == 0x04:
                        size = 3 + buffer[offset + 2]
                    elif kind == 0x02:
                        if n - offset < 5:
                            break
                        size = 5 + (buffer[offset + 3] | buffer[offset + 4] << 8)
                    else:
                        raise RuntimeError(f'bad H4 type {kind}')
                    if n - offset < size:
                        break
                    if kind == 0x02:
                        pb = buffer[offset + 2] >> 4 & 3
                        if pb == 2:
                            opcode = buffer[offset + 9]
                            if opcode == 0x1B:
                                seq = struct.unpack_from('<I', buffer, offset + 12)[0]
                                if seq != seen:
                                    in_order = False
                                seen += 1
                            elif opcode == 0x13:
                                got_write_response = True
                    offset += size
                del buffer[:offset]
            elapsed = time.monotonic() - t0
            R.check(f'fast tap: flood {count} x {length} B complete and in order',
                    seen == count and in_order and got_write_response,
                    f'{seen} in {elapsed:.2f} s = {seen / elapsed:.0f} notifications/s')
            R.note(f'fast tap (raw reader, no snoop, DLE 251): {count}x{length}B at '
                   f'{seen / elapsed:.0f} notifications/s, '
                   f'{seen * length / elapsed / 1e6:.1f} MB/s payload')
            hci.task = asyncio.get_running_loop().create_task(hci._pump())
        # A host that goes away in the middle of a long flood.
        hci.task.cancel()
        await asyncio.sleep(0)
        hci.send_acl(handle, struct.pack('<HHBHB', 10, 4, 0x12, control, 0x01)
                     + struct.pack('<IH', 10_000_000, 244))
        await hci.reader.readexactly(1 << 20)
        hci.writer.close()
        await asyncio.sleep(0.3)
        # Garbage H4 from the next host must not kill the peer either.
        reader, writer = await asyncio.open_connection('127.0.0.1', peer.port)
        writer.write(b'\x07garbage')
        await asyncio.sleep(0.2)
        writer.close()
        await asyncio.sleep(0.2)
        hci = await RawHci.connect(peer.port)
        cc = await hci.command(0x0C03)
        R.check('fast tap: host leaving mid-flood and garbage H4 -> next host works',
                cc is not None and cc[6] == 0 and 'Traceback' not in peer.stderr_text()
                and 'flood stopped after' in peer.stderr_text()
                and 'PROTOCOL-VIOLATION: bad H4 data' in peer.stderr_text(),
                repr(cc and cc.hex()))
        hci.close()
    finally:
        peer.stop()
    flood_lines = [line for line in peer.stderr_text().splitlines() if 'flood of' in line]
    for line in flood_lines:
        R.note('peer: ' + line.split('peer: ', 1)[-1])


async def reset_and_nocp_tests(log_dir: str) -> None:
    """HCI Reset while connected; NOCP delay with a tiny buffer count; snoop after kill -9."""
    snoop = os.path.join(log_dir, 'killed.btsnoop')
    peer = PeerProcess('--nocp-delay-ms', '100', '--acl-count-a', '2', '--snoop', snoop,
                       '--snoop-flush', log_dir=log_dir, tag='reset')
    try:
        hci = await RawHci.connect(peer.port)
        await hci.command(0x0C03)
        handle = await raw_connect(hci)
        R.check('reset: connected', handle is not None)
        # Three ATT requests at once with only 2 credits: a protocol violation.
        t0 = time.monotonic()
        for _ in range(3):
            hci.send_acl(handle, struct.pack('<HHBH', 3, 4, 0x02, 100))
        nocp = await hci.wait_event(lambda p: p[0] == 4 and p[1] == 0x13)
        delay = time.monotonic() - t0
        R.check('nocp: Number Of Completed Packets held back and coalesced',
                nocp is not None and delay >= 0.08
                and struct.unpack_from('<BHH', nocp, 3) == (1, handle, 3),
                f'{nocp and nocp.hex()} after {1000 * delay:.0f} ms')
        await asyncio.sleep(0.1)
        R.check('nocp: credit overrun logged as PROTOCOL-VIOLATION',
                'PROTOCOL-VIOLATION' in peer.stderr_text())

        # HCI Reset while connected: the peripheral sees a disconnection and advertises
        # again; the host can connect again after the reset.
        cc = await hci.command(0x0C03)
        R.check('reset while connected -> Command Complete', cc is not None and cc[6] == 0)
        await asyncio.sleep(0.3)
        R.check('reset while connected -> the peripheral saw a disconnection',
                'peripheral: disconnected' in peer.stderr_text())
        handle = await raw_connect(hci)
        R.check('reset while connected -> can connect again', handle is not None)
        hci.close()
        await asyncio.sleep(0.2)
    finally:
        peer.process.kill()
        peer.process.wait()
        peer.log.close()
    tshark = shutil.which('tshark')
    if tshark:
        result = subprocess.run([tshark, '-r', snoop], capture_output=True, text=True,
                                timeout=HANG_GUARD)
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        R.check('snoop-flush: file readable after kill -9', result.returncode == 0
                and len(lines) >= 10 and 'LE Connection Complete' in result.stdout,
                f'{len(lines)} frames, rc {result.returncode}')


async def raw_primary_services(hci: RawHci, handle: int) -> list[tuple[int, int, str]]:
    """(start, end, UUID upper-case string) of every primary service, via Read By Group Type."""
    services = []
    start = 1
    while start <= 0xFFFF:
        response = await raw_att(hci, handle, struct.pack('<BHHH', 0x10, start, 0xFFFF, 0x2800))
        if not response or response[0] != 0x11:
            break
        length = response[1]
        for offset in range(2, len(response), length):
            first, last = struct.unpack_from('<HH', response, offset)
            raw_uuid = response[offset + 4:offset + length]
            if len(raw_uuid) == 2:
                uuid = f'{struct.unpack("<H", raw_uuid)[0]:04X}'
            else:
                h = raw_uuid[::-1].hex().upper()
                uuid = f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'
            services.append((first, last, uuid))
        start = services[-1][1] + 1 if services else 0x10000
    return services


async def check_tolerance_service(hci: RawHci, handle: int, services, chars) -> None:
    """The tolerance service: a 600-octet value read whole (Read + Read Blob at ATT_MTU
    247), and an include of a 128-bit secondary service whose declaration leaves the UUID
    out (4 octets, Core Vol 3 Part G 3.2), readable from the included service's declaration."""
    tolerance = next(((first, last) for first, last, uuid in services if uuid == custom(0x200)), None)
    if not R.check('tolerance: the service is there, after the test service', tolerance is not None
                   and tolerance[0] > 0x2E, repr(services)):
        return
    include = await raw_att(hci, handle, struct.pack('<BHHH', 0x08, tolerance[0], tolerance[1], 0x2802))
    ok = R.check('tolerance: one include declaration of 4 octets (UUID left out)',
                 include is not None and include[0] == 0x09 and include[1] == 6 and len(include) == 8,
                 include.hex() if include else repr(include))
    if ok:
        first, last = struct.unpack_from('<HH', include, 4)
        declaration = await raw_att(hci, handle, struct.pack('<BH', 0x0A, first))
        R.check('tolerance: the included service declares the 128-bit UUID',
                declaration == b'\x0b' + bytes.fromhex(custom(0x201).replace('-', ''))[::-1],
                declaration.hex() if declaration else repr(declaration))
    value_handle = chars.get(custom(0x203))
    value = b''
    if value_handle is not None:
        while True:
            part = await raw_att(hci, handle, struct.pack('<BH', 0x0A, value_handle) if not value
                                 else struct.pack('<BHH', 0x0C, value_handle, len(value)))
            if not part or part[0] not in (0x0B, 0x0D):
                break
            value += part[1:]
            if len(part) - 1 < 246:
                break
    R.check('tolerance: the 600-octet value reads whole', value == bytes((i * 7 + 3) % 256 for i in range(600)),
            f'{len(value)} octets')


async def layout_tests(log_dir: str) -> None:
    """--layout 2: an extra service before the test service; handles and hash move."""
    rejected = subprocess.run([PYTHON, PEER, '--layout', '3'], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=HANG_GUARD)
    R.check('layout: --layout 3 is rejected', rejected.returncode == 2,
            f'rc {rejected.returncode}')
    seen = {}
    for layout in (1, 2):
        peer = PeerProcess('--layout', str(layout), log_dir=log_dir, tag=f'layout{layout}')
        try:
            hci = await RawHci.connect(peer.port)
            try:
                await hci.command(0x0C03)
                handle = await raw_connect(hci)
                if not R.check(f'layout {layout}: connected', handle is not None):
                    return
                await raw_att(hci, handle, struct.pack('<BH', 0x02, 247))
                await hci.command(0x2022, struct.pack('<HHH', handle, 251, 2120))
                await hci.collect(0.1)
                hash_response = await raw_att(hci, handle,
                                              struct.pack('<BHHH', 0x08, 1, 0xFFFF, 0x2B2A))
                services = await raw_primary_services(hci, handle)
                chars = await raw_characteristics(hci, handle)
                read_only = chars.get(custom(8))
                value = (await raw_att(hci, handle, struct.pack('<BH', 0x0A, read_only))
                         if read_only is not None else b'')
                seen[layout] = (hash_response, services, read_only, value)
                if layout == 1:
                    await check_tolerance_service(hci, handle, services, chars)
            finally:
                hci.close()
        finally:
            peer.stop()
    (hash1, services1, read_only1, value1), (hash2, services2, read_only2, value2) = (
        seen[1], seen[2])
    uuids1 = [uuid for _, _, uuid in services1]
    uuids2 = [uuid for _, _, uuid in services2]
    R.check('layout 1: the documented handles (test service at 0x001D, 0008 at 0x002E)',
            (0x1D, 0x2E, custom(1)) in services1 and read_only1 == 0x2E
            and custom(0x100) not in uuids1, f'{services1}, 0008 at {read_only1}')
    R.check('layout 2: an extra service right before the test service',
            uuids2 == uuids1[:-2] + [custom(0x100), custom(1), custom(0x200)]
            and (0x1D, 0x1F, custom(0x100)) in services2 and (0x20, 0x31, custom(1)) in services2,
            repr(services2))
    R.check('layout 2: 0008 moved by 3 handles and reads the same',
            read_only2 == read_only1 + 3 and value1 == value2 == b'\x0bBluejay read-only',
            f'{read_only1} -> {read_only2}, {value2!r}')
    R.check('layout 2: the Database Hash differs from layout 1',
            len(hash1) == 20 and len(hash2) == 20 and hash1[:4] == hash2[:4] == b'\x09\x12\x0d\x00'
            and hash1[4:] != hash2[4:], f'{hash1.hex()} / {hash2.hex()}')


async def misbehave_tests(log_dir: str) -> None:
    """--att-mtu: the MTU the server offers; control point 0x0A: the next request is never answered."""
    rejected = subprocess.run([PYTHON, PEER, '--att-mtu', '22'], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=HANG_GUARD)
    R.check('misbehave: --att-mtu 22 is rejected', rejected.returncode == 2,
            f'rc {rejected.returncode}')
    peer = PeerProcess('--att-mtu', '23', log_dir=log_dir, tag='misbehave')
    try:
        hci = await RawHci.connect(peer.port)
        try:
            await hci.command(0x0C03)
            handle = await raw_connect(hci)
            if not R.check('misbehave: connected', handle is not None):
                return
            mtu = await raw_att(hci, handle, struct.pack('<BH', 0x02, 247))
            R.check('misbehave: --att-mtu 23 answers Exchange MTU with 23',
                    mtu == b'\x03\x17\x00', mtu.hex())
            control = (await raw_characteristics(hci, handle)).get(custom(6))
            if not R.check('misbehave: control point found', control is not None):
                return
            written = await raw_att(hci, handle, struct.pack('<BHB', 0x12, control, 0x0A))
            R.check('misbehave: control point 0A is acknowledged', written == b'\x13', written.hex())
            # Silence is watched for 5 s, not the hang guard's 120: an answer later than that
            # would go unseen (a pass it did not earn), never fail a sound peer.
            silent = await raw_att(hci, handle, struct.pack('<BH', 0x0A, 0x0003), timeout=5.0)
            R.check('misbehave: the next request is never answered', silent == b'', silent.hex())
            answered = await raw_att(hci, handle, struct.pack('<BH', 0x0A, 0x0003))
            R.check('misbehave: only that one', answered == b'\x0bBluejay HRM', answered.hex())
        finally:
            hci.close()
    finally:
        peer.stop()


async def l2cap_tests(log_dir: str) -> None:
    """The L2CAP credit-based echo PSMs, from a Bumble host: an echo, a refused PSM, the
    encryption-only PSM refused by name, the peer closing on `bluejay:disconnect`."""
    from bumble import hci, l2cap
    from bumble.device import Device
    from bumble.transport import open_transport

    peer = PeerProcess('--l2cap-mps', '64', log_dir=log_dir, tag='l2cap')
    try:
        target = hci.Address(ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
        async with await open_transport(peer.bumble_transport) as (source, sink):
            device = Device.with_hci('selftest', hci.Address('C0:FF:EE:00:00:01'), source, sink)
            await device.power_on()
            connection = await device.connect(target, timeout=HANG_GUARD)
            channel = await connection.create_l2cap_channel(spec=l2cap.LeCreditBasedChannelSpec(psm=0x0080, mtu=512, mps=100))
            R.check('l2cap: echo channel opens with the peer\'s MTU and MPS', (channel.peer_mtu, channel.peer_mps) == (2048, 64),
                    f'{channel.peer_mtu}/{channel.peer_mps}')
            received = bytearray()
            done = asyncio.get_running_loop().create_future()

            def sink_(sdu: bytes) -> None:
                received.extend(sdu)
                if len(received) >= 20000 and not done.done():
                    done.set_result(None)
            channel.sink = sink_
            data = bytes(i % 256 for i in range(20000))
            for offset in range(0, len(data), 2048):
                channel.write(data[offset:offset + 2048])
            await asyncio.wait_for(done, HANG_GUARD)
            R.check('l2cap: 20000 octets echoed intact', bytes(received) == data, f'{len(received)} octets')
            for psm, name in ((0x00F0, 'SPSM not supported'), (0x0081, 'insufficient encryption')):
                try:
                    await connection.create_l2cap_channel(spec=l2cap.LeCreditBasedChannelSpec(psm=psm))
                    R.check(f'l2cap: PSM 0x{psm:04X} refused: {name}', False, 'it opened')
                except l2cap.L2capError as error:
                    R.check(f'l2cap: PSM 0x{psm:04X} refused: {name}', error.error_code in (0x0002, 0x0008), str(error))
            closed = asyncio.get_running_loop().create_future()
            channel.on('close', lambda: closed.done() or closed.set_result(None))
            channel.write(b'bluejay:disconnect')
            await asyncio.wait_for(closed, HANG_GUARD)
            R.check('l2cap: bluejay:disconnect makes the peer close the channel', True)
            await connection.disconnect()
        text = peer.stderr_text()
        R.check('l2cap: no protocol violations', 'PROTOCOL-VIOLATION' not in text)
    finally:
        peer.stop()


async def multi_peripheral_tests(log_dir: str) -> None:
    """--peripherals 2: two GATT peripherals on the link, both connected at once."""
    rejected = subprocess.run([PYTHON, PEER, '--peripherals', '0'], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=HANG_GUARD)
    R.check('multi: --peripherals 0 is rejected', rejected.returncode == 2,
            f'rc {rejected.returncode}')
    second = 'F0:0D:B1:E7:00:02'
    second_bytes = bytes.fromhex(second.replace(':', ''))[::-1]
    second_name = NAME + ' 2'
    peer = PeerProcess('--peripherals', '2', log_dir=log_dir, tag='multi')
    try:
        R.check('multi: READY line adds address2 before name', peer.ready_line ==
                f'READY transport=tcp:127.0.0.1:{peer.port} address={ADDRESS} '
                f'address_type=random address2={second} name={NAME}', peer.ready_line)
        hci = await RawHci.connect(peer.port)
        try:
            await hci.command(0x0C03)
            # Legacy active scan: both advertise the same ADV data; the second's scan
            # response carries its complete name (the 128-bit UUID no longer fits).
            await hci.command(0x200B, struct.pack('<BHHBB', 1, 0x10, 0x10, 0, 0))
            await hci.command(0x200C, bytes([1, 1]))
            packets = await hci.collect(1.0)
            await hci.command(0x200C, bytes([0, 0]))
            reports = parse_legacy_reports(packets)
            by_address = {address: [r for r in reports if r[2] == address]
                          for address in (PEER_ADDRESS_BYTES, second_bytes)}
            first_rsp = [r[3] for r in by_address[PEER_ADDRESS_BYTES] if r[0] == 4]
            second_adv = [r[3] for r in by_address[second_bytes] if r[0] == 0]
            second_rsp = [r[3] for r in by_address[second_bytes] if r[0] == 4]
            R.check('multi: both peripherals advertise, with distinct names',
                    first_rsp == [SCAN_RSP] and second_adv == [ADV_DATA]
                    and second_rsp == [bytes([len(second_name) + 1, 0x09]) + second_name.encode()],
                    f'first {[r.hex() for r in first_rsp]}, second {[r.hex() for r in second_rsp]}')

            # Both connected at once, each its own GATT server (GAP Device Name 0x0003).
            first_handle = await raw_connect(hci)
            second_handle = await raw_connect(hci, second_bytes)
            ok = R.check('multi: connected to both, distinct handles',
                         first_handle is not None and second_handle is not None
                         and first_handle != second_handle, f'{first_handle} / {second_handle}')
            if not ok:
                return
            names = [await raw_att(hci, handle, struct.pack('<BH', 0x0A, 0x0003))
                     for handle in (first_handle, second_handle)]
            R.check('multi: each link reaches its own peripheral',
                    names == [b'\x0b' + NAME.encode(), b'\x0b' + second_name.encode()],
                    repr(names))
            # One link goes, the other stays usable.
            await hci.command(0x0406, struct.pack('<HB', first_handle, 0x13))
            done = await hci.wait_event(lambda p: p[0] == 4 and p[1] == 0x05)
            R.check('multi: the first link disconnects',
                    done is not None and struct.unpack_from('<H', done, 4)[0] == first_handle,
                    repr(done and done.hex()))
            name = await raw_att(hci, second_handle, struct.pack('<BH', 0x0A, 0x0003))
            R.check('multi: the second link still works', name == b'\x0b' + second_name.encode(),
                    repr(name))
            await hci.command(0x0406, struct.pack('<HB', second_handle, 0x13))
            done = await hci.wait_event(lambda p: p[0] == 4 and p[1] == 0x05)
            R.check('multi: the second link disconnects',
                    done is not None and struct.unpack_from('<H', done, 4)[0] == second_handle,
                    repr(done and done.hex()))
        finally:
            hci.close()
        await asyncio.sleep(0.2)
        text = peer.stderr_text()
        R.check('multi: each peripheral logged its own connection',
                'peripheral: connected' in text and 'peripheral 2: connected' in text
                and 'peripheral 2: disconnected' in text)
        R.check('multi: no tracebacks', 'Traceback' not in text, f'see {peer.log_path}')
    finally:
        rc = peer.stop()
    R.check('multi: peer exits 0 on SIGTERM', rc == 0, f'rc {rc}')


async def advertiser_tests(log_dir: str) -> None:
    """--advertisers 3: a BTHome, an ATC (pvvx) and a Ruuvi sensor that only advertise."""
    import broadcasters
    peer = PeerProcess('--advertisers', '3', '--advertiser-period-ms', '200',
                       '--advertiser-interval-ms', '50', log_dir=log_dir, tag='adv')
    try:
        first = broadcasters.DEFAULT_ADDRESS
        R.check('adv: READY line names the first advertiser and the count',
                f' advertiser={first} advertisers=3 name={NAME}' in peer.ready_line, peer.ready_line)
        macs = [bytes.fromhex(broadcasters.address(first, i).replace(':', '')) for i in range(3)]
        index_of = {mac[::-1]: i for i, mac in enumerate(macs)}
        seen: dict[int, list[tuple[int, int, bytes]]] = {i: [] for i in range(3)}
        hci = await RawHci.connect(peer.port)
        try:
            await hci.command(0x0C03)
            # Active, duplicates reported: a non-scannable advertiser answers no scan request.
            await hci.command(0x200B, struct.pack('<BHHBB', 1, 0x10, 0x10, 0, 0))
            await hci.command(0x200C, bytes([1, 0]))
            deadline = time.monotonic() + HANG_GUARD
            # Until each has sent three readings (or the hang guard).
            while (any(len({d for _, _, d in reports}) < 3 for reports in seen.values())
                   and time.monotonic() < deadline):
                try:
                    packet = await hci.next(deadline - time.monotonic())
                except asyncio.TimeoutError:
                    break
                for event_type, address_type, address, data in parse_legacy_reports([packet]):
                    if address in index_of:
                        seen[index_of[address]].append((event_type, address_type, data))
            await hci.command(0x200C, bytes([0, 0]))
        finally:
            hci.close()
        for i, kind in enumerate(broadcasters.KINDS):
            reports = seen[i]
            R.check(f'adv: {kind} is ADV_NONCONN_IND from a random address',
                    bool(reports) and all(t == 3 and a == 1 for t, a, _ in reports),
                    repr({(t, a) for t, a, _ in reports}))
            frames = {broadcasters.frame(kind, i, count, macs[i]): count for count in range(1, 200)}
            counts = []
            for _, _, data in reports:
                count = frames.get(data)
                if count is None or not counts or counts[-1] != count:
                    counts.append(count)
            R.check(f'adv: {kind} frames as broadcasters.py builds them, readings in order',
                    len(counts) >= 3 and None not in counts
                    and all(b == a + 1 for a, b in zip(counts, counts[1:])),
                    f'{counts}; first {reports[0][2].hex() if reports else None}')
        R.check('adv: the BTHome frame is bthome.io\'s layout',
                broadcasters.frame('bthome', 0, 5, macs[0]).hex()
                == '020106' '0e16d2fc' '40' '0005' '015a' '020208' '039411',  # 20.50 °C, 45.00 %
                broadcasters.frame('bthome', 0, 5, macs[0]).hex())
        # bthome-encrypted: the same objects under bthome.io's example key, counter 5.
        from cryptography.hazmat.primitives.ciphers.aead import AESCCM
        sealed = broadcasters.frame('bthome-encrypted', 0, 5, macs[0])[8:]
        counter = sealed[-8:-4]
        opened = AESCCM(broadcasters.ENCRYPTION_KEY, tag_length=4).decrypt(
            macs[0] + bytes([0xD2, 0xFC, 0x41]) + counter, sealed[:-8] + sealed[-4:], None)
        R.check('adv: the encrypted BTHome frame opens with its key to the plain objects',
                counter == bytes([5, 0, 0, 0])
                and opened == broadcasters.frame('bthome', 0, 5, macs[0])[8:], opened.hex())
        text = peer.stderr_text()
        R.check('adv: no tracebacks', 'Traceback' not in text, f'see {peer.log_path}')
    finally:
        rc = peer.stop()
    R.check('adv: peer exits 0 on SIGTERM', rc == 0, f'rc {rc}')


async def phone_tests(log_dir: str) -> None:
    """--phone-irk twice, --rotate-every 0.3: two phones behind rotating resolvable private
    addresses; SIGUSR1 silences the first."""
    import broadcasters
    from bumble import crypto
    irks = [bytes.fromhex('00112233445566778899AABBCCDDEEFF'), bytes.fromhex('0F1E2D3C4B5A69788796A5B4C3D2E1F0')]
    # Core 6.0 Vol 3 Part H Appendix D.7's sample: IRK ec0234a3…7d9b, prand 708194, ah 0dfbaa.
    sample = broadcasters.resolvable_private_address(bytes.fromhex('ec0234a357c8ad05341010a60a397d9b'), bytes.fromhex('708194'))
    R.check('phone: an address as the specification\'s sample data makes it', sample == '70:81:94:0D:FB:AA', sample)
    prands = [broadcasters.fresh_prand() for _ in range(1000)]
    R.check('phone: prand\'s top bits are 0b01', all(p[0] >> 6 == 1 for p in prands))

    def phone_of(address: bytes) -> int | None:
        # The report's address, least significant first: hash, then prand (Vol 6 Part B 1.3.2.2).
        matches = [i for i, irk in enumerate(irks) if crypto.ah(irk[::-1], address[3:]) == address[:3]]
        return matches[0] if matches else None

    peer = PeerProcess('--phone-irk', irks[0].hex(), '--phone-irk', irks[1].hex(), '--rotate-every', '0.3',
                       log_dir=log_dir, tag='phone')
    try:
        reports: list[tuple[int, bytes]] = []  # (phone, address) in the order heard
        strangers: set[bytes] = set()
        hci = await RawHci.connect(peer.port)

        def addresses(phone: int) -> list[bytes]:
            return list(dict.fromkeys(a for p, a in reports if p == phone))

        async def listen(until) -> None:
            deadline = time.monotonic() + HANG_GUARD
            while not until() and time.monotonic() < deadline:
                try:
                    packet = await hci.next(deadline - time.monotonic())
                except asyncio.TimeoutError:
                    break
                for event_type, address_type, address, data in parse_legacy_reports([packet]):
                    if data != broadcasters.PHONE_DATA:
                        continue
                    phone = phone_of(address)
                    if event_type != 3 or address_type != 1 or phone is None:
                        strangers.add(address)
                    else:
                        reports.append((phone, address))
        try:
            await hci.command(0x0C03)
            await hci.command(0x200B, struct.pack('<BHHBB', 0, 0x10, 0x10, 0, 0))
            await hci.command(0x200C, bytes([1, 0]))
            await listen(lambda: min(len(addresses(0)), len(addresses(1))) >= 3)
            R.check('phone: each phone took three addresses, each resolving with its IRK only',
                    min(len(addresses(0)), len(addresses(1))) >= 3 and not strangers,
                    f'{len(addresses(0))}, {len(addresses(1))}, others {len(strangers)}')
            logged = {line.rsplit(' ', 1)[1] for line in peer.stderr_text().splitlines() if ' phone 1: ' in line}
            R.check('phone: the log names each address phone 1 used',
                    all(':'.join(f'{o:02X}' for o in a[::-1]) in logged for a in addresses(0)), f'{sorted(logged)[:3]}')
            peer.process.send_signal(signal.SIGUSR1)
            # The first address phone 2 took after the log says phone 1 is quiet went out
            # after phone 1's last PDU (one loop sends both, in order): none of phone 1 follows.
            def taken_after_quiet() -> list[str]:
                lines = peer.stderr_text().splitlines()
                quiet = next((i for i, line in enumerate(lines) if 'phone 1: quiet' in line), len(lines))
                return [line.rsplit(' ', 1)[1] for line in lines[quiet:] if ' phone 2: ' in line]
            deadline = time.monotonic() + HANG_GUARD
            while not taken_after_quiet() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            first = bytes.fromhex(taken_after_quiet()[0].replace(':', ''))[::-1] if taken_after_quiet() else b''
            # Five rounds of phone 2 after it: phone 1, still going, would be in each.
            def tail() -> list[tuple[int, bytes]]:
                return reports[reports.index((1, first)):] if (1, first) in reports else []
            await listen(lambda: len(tail()) >= 5)
            after = tail()
            R.check('phone: SIGUSR1 silences phone 1, phone 2 goes on',
                    len(after) >= 5 and not any(p == 0 for p, _ in after),
                    f'{len(after)} reports after, {sum(p == 0 for p, _ in after)} of phone 1')
            await hci.command(0x200C, bytes([0, 0]))
        finally:
            hci.close()
        R.check('phone: no tracebacks', 'Traceback' not in peer.stderr_text(), f'see {peer.log_path}')
    finally:
        rc = peer.stop()
    R.check('phone: peer exits 0 on SIGTERM', rc == 0, f'rc {rc}')


async def pairing_tests(log_dir: str) -> None:
    """Legacy Just Works and LESC passkey pairing, bonded re-encryption."""
    from bumble import att, hci, pairing
    from bumble.core import UUID
    from bumble.device import Device, Peer
    from bumble.transport import open_transport

    target = hci.Address(ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)

    class Keyboard(pairing.PairingDelegate):
        async def get_number(self):
            return 123456

    for label, extra, config in (
        ('legacy Just Works', (), dict(sc=False, mitm=False)),
        ('LESC passkey (peer displays 123456)', ('--io-capability', 'display'),
         dict(sc=True, mitm=True)),
    ):
        peer = PeerProcess(*extra, log_dir=log_dir, tag='pair-' + label.split()[0])
        try:
            async with await open_transport(peer.bumble_transport) as (source, sink):
                device = Device.with_hci('selftest', hci.Address('C0:FF:EE:00:00:02'),
                                         source, sink)
                io = (pairing.PairingDelegate.KEYBOARD_INPUT_ONLY if config['mitm']
                      else pairing.PairingDelegate.NO_OUTPUT_NO_INPUT)
                # The central connects with its static random address, so that is the
                # identity address it must distribute (else the peer finds no bond).
                device.pairing_config_factory = lambda _c: pairing.PairingConfig(
                    bonding=True, delegate=Keyboard(io_capability=io),
                    identity_address_type=pairing.PairingConfig.AddressType.RANDOM,
                    **config)
                await device.power_on()
                connection = await device.connect(target, timeout=HANG_GUARD)
                peer_ = Peer(connection)
                await peer_.discover_all()
                secret = peer_.get_characteristics_by_uuid(UUID(custom(4)))[0]
                try:
                    await peer_.read_value(secret)
                    before = None
                except att.ATT_Error as error:
                    before = int(error.error_code)
                await asyncio.wait_for(connection.pair(), HANG_GUARD)
                value = await peer_.read_value(secret)
                R.check(f'pairing {label}: 0x0F before, readable after pairing',
                        before == 0x0F and value == b'Bluejay secret', f'{before} {value!r}')
                await asyncio.wait_for(connection.disconnect(), HANG_GUARD)
                connection = await device.connect(target, timeout=HANG_GUARD)
                try:
                    await asyncio.wait_for(connection.encrypt(), HANG_GUARD)
                    peer_ = Peer(connection)
                    await peer_.discover_all()
                    secret = peer_.get_characteristics_by_uuid(UUID(custom(4)))[0]
                    value = await peer_.read_value(secret)
                    R.check(f'pairing {label}: bonded re-encryption after reconnect',
                            value == b'Bluejay secret', repr(value))
                except Exception as error:
                    R.check(f'pairing {label}: bonded re-encryption after reconnect', False,
                            repr(error))
                if connection.handle in device.connections:
                    await asyncio.wait_for(connection.disconnect(), HANG_GUARD)
        finally:
            peer.stop()


# -----------------------------------------------------------------------------
# snoop / tshark
# -----------------------------------------------------------------------------
def check_snoop(path: str) -> None:
    tshark = shutil.which('tshark')
    if tshark is None:
        R.check('snoop: tshark available', False, 'tshark not installed')
        return
    result = subprocess.run(
        [tshark, '-r', path, '-T', 'fields', '-E', 'separator=|',
         '-e', 'frame.number', '-e', 'hci_h4.direction', '-e', 'hci_h4.type',
         '-e', '_ws.col.Protocol'],
        capture_output=True, text=True, timeout=HANG_GUARD)
    rows = [line.split('|') for line in result.stdout.splitlines() if line]
    commands = [r for r in rows if r[2] == '0x01']
    events = [r for r in rows if r[2] == '0x04']
    acl = [r for r in rows if r[2] == '0x02']
    R.check('snoop: tshark reads the file', result.returncode == 0 and len(rows) > 100,
            f'{len(rows)} frames, rc {result.returncode}, {result.stderr.strip()[:200]}')
    R.check('snoop: commands are Sent (direction 0x00), events Rcvd (0x01)',
            commands and events and all(r[1] == '0x00' for r in commands)
            and all(r[1] == '0x01' for r in events),
            f'{len(commands)} commands, {len(events)} events, {len(acl)} ACL')
    summary = subprocess.run([tshark, '-r', path], capture_output=True, text=True, timeout=HANG_GUARD)
    sent = [line for line in summary.stdout.splitlines() if 'HCI_CMD' in line]
    R.check('snoop: summary shows commands as "host → controller"/Sent',
            sent and all('host' in line.split('HCI_CMD')[0] for line in sent[:20]),
            sent[0].strip()[:120] if sent else 'no commands')
    malformed = subprocess.run([tshark, '-r', path, '-Y', '_ws.malformed'],
                               capture_output=True, text=True, timeout=HANG_GUARD)
    bad = [line for line in malformed.stdout.splitlines() if line.strip()]
    R.check('snoop: zero malformed frames', not bad, f'{len(bad)} malformed')
    hierarchy = subprocess.run([tshark, '-r', path, '-q', '-z', 'io,phs'],
                               capture_output=True, text=True, timeout=HANG_GUARD)
    R.note('snoop protocol hierarchy:\n' + '\n'.join(
        line for line in hierarchy.stdout.splitlines() if 'frames' in line))


# -----------------------------------------------------------------------------
# Lifetime
# -----------------------------------------------------------------------------
def port_is_free(port: int) -> bool:
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=0.5):
            return False
    except OSError:
        return True


def process_running(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ('Z', 'X')


def lifetime_tests(log_dir: str) -> None:
    # SIGTERM: exit 0 promptly, port freed.
    peer = PeerProcess(log_dir=log_dir, tag='sigterm')
    t0 = time.monotonic()
    peer.process.send_signal(signal.SIGTERM)
    try:
        rc = peer.process.wait(5)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    peer.stop()
    R.check('lifetime: SIGTERM -> exit 0 promptly', rc == 0 and took < 2,
            f'rc {rc} in {1000 * took:.0f} ms')
    R.check('lifetime: port free after SIGTERM', port_is_free(peer.port))

    # SIGTERM while a host is connected, with snoop: file closed cleanly.
    snoop = os.path.join(log_dir, 'sigterm.btsnoop')
    peer = PeerProcess('--snoop', snoop, log_dir=log_dir, tag='sigterm-connected')

    async def connect_and_reset():
        hci = await RawHci.connect(peer.port)
        await hci.command(0x0C03)
        return hci

    loop = asyncio.new_event_loop()
    hci = loop.run_until_complete(connect_and_reset())
    t0 = time.monotonic()
    peer.process.send_signal(signal.SIGTERM)
    try:
        rc = peer.process.wait(5)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    hci.close()
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    peer.stop()
    size = os.path.getsize(snoop)
    R.check('lifetime: SIGTERM with a connected host -> exit 0, snoop complete',
            rc == 0 and took < 2 and size == 16 + (24 + 4) + (24 + 7),
            f'rc {rc} in {1000 * took:.0f} ms, snoop {size} bytes')

    # Parent death: the peer exits by itself.
    log = open(os.path.join(log_dir, 'peer-orphan.log'), 'wb')
    shell = subprocess.Popen(
        ['bash', '-c', f'"{PYTHON}" "{PEER}" --port 0 & echo "PID $!"; wait'],
        stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
    pid_line = shell.stdout.readline().decode()
    ready_line = shell.stdout.readline().decode()
    pid = int(pid_line.split()[1])
    port = int(ready_line.split()[1].rsplit(':', 1)[1])
    os.kill(shell.pid, signal.SIGKILL)
    shell.wait()
    t0 = time.monotonic()
    gone = False
    while time.monotonic() - t0 < 5:
        if not process_running(pid):  # gone, or a zombie waiting for its new parent
            gone = True
            break
        time.sleep(0.05)
    took = time.monotonic() - t0
    if not gone:
        os.kill(pid, signal.SIGKILL)
    log.close()
    R.check('lifetime: peer exits when its parent dies', gone, f'after {1000 * took:.0f} ms')
    R.check('lifetime: port free after parent death', port_is_free(port))

    # stdin EOF.
    peer = PeerProcess('--exit-on-stdin-eof', log_dir=log_dir, tag='stdin',
                       stdin=subprocess.PIPE)
    t0 = time.monotonic()
    peer.process.stdin.close()
    try:
        rc = peer.process.wait(5)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    peer.stop()
    R.check('lifetime: --exit-on-stdin-eof exits 0 on EOF', rc == 0,
            f'rc {rc} in {1000 * took:.0f} ms')

    # Unix socket transport.
    path = os.path.join(log_dir, 'peer.sock')
    peer = PeerProcess('--unix', path, log_dir=log_dir, tag='unix')
    R.check('unix: READY line', peer.ready_line ==
            f'READY transport=unix:{path} address={ADDRESS} address_type=random name={NAME}',
            peer.ready_line)

    async def unix_reset():
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(bytes.fromhex('01030c00'))
        data = await asyncio.wait_for(reader.readexactly(7), HANG_GUARD)
        writer.close()
        return data

    loop = asyncio.new_event_loop()
    try:
        data = loop.run_until_complete(unix_reset())
    except Exception as error:
        data = repr(error).encode()
    loop.close()
    R.check('unix: HCI Reset answered over the unix socket',
            data == bytes.fromhex('040e0401030c00'), data.hex())
    rc = peer.stop()
    R.check('unix: socket file removed at exit', rc == 0 and not os.path.exists(path))


# -----------------------------------------------------------------------------
async def main_async(options, log_dir: str) -> None:
    snoop = os.path.join(log_dir, 'session.btsnoop')
    peer = PeerProcess('--snoop', snoop, '--snoop-flush', '--acl-len-a', '100',
                       '--acl-count-a', '4', *options.peer_arg, log_dir=log_dir, tag='main')
    R.check('READY line format', peer.ready_line ==
            f'READY transport=tcp:127.0.0.1:{peer.port} address={ADDRESS} '
            f'address_type=random name={NAME}', peer.ready_line)
    R.note(f'peer start to READY: {1000 * peer.ready_seconds:.0f} ms')
    try:
        if not options.k or 'raw' in options.k:
            await raw_controller_tests(peer, 100, 4)
        if not options.k or 'gatt' in options.k:
            await bumble_session(peer, first=True)
            await asyncio.sleep(0.3)
            await bumble_session(peer, first=False)
        await asyncio.sleep(0.2)
        text = peer.stderr_text()
        violations = [line for line in text.splitlines() if 'PROTOCOL-VIOLATION' in line]
        R.check('peer logged no protocol violations from the Bumble host', not violations,
                '; '.join(violations[:3]))
        tracebacks = text.count('Traceback')
        R.check('peer logged no tracebacks', tracebacks == 0,
                f'{tracebacks} tracebacks, see {peer.log_path}')
    finally:
        rc = peer.stop()
    R.check('main peer exits 0 on SIGTERM', rc == 0, f'rc {rc}')
    if not options.k or 'snoop' in options.k:
        check_snoop(snoop)
    if not options.k or 'mute' in options.k:
        await mute_test(log_dir)
    if not options.k or 'reset' in options.k:
        await reset_and_nocp_tests(log_dir)
    if not options.k or 'pair' in options.k:
        await pairing_tests(log_dir)
    if not options.k or 'tap' in options.k:
        await fast_tap_flood(log_dir)
    if not options.k or 'multi' in options.k:
        await multi_peripheral_tests(log_dir)
    if not options.k or 'adv' in options.k:
        await advertiser_tests(log_dir)
    if not options.k or 'phone' in options.k:
        await phone_tests(log_dir)
    if not options.k or 'layout' in options.k:
        await layout_tests(log_dir)
    if not options.k or 'misbehave' in options.k:
        await misbehave_tests(log_dir)
    if not options.k or 'l2cap' in options.k:
        await l2cap_tests(log_dir)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('-k', action='append', help='only: raw, gatt, snoop, mute, reset, pair, tap, multi, adv, phone, layout, misbehave, l2cap, lifetime')
    parser.add_argument('--keep-logs', action='store_true')
    parser.add_argument('--peer-arg', action='append', default=[],
                        help='extra argument for the main peer (e.g. --peer-arg=-vv)')
    options = parser.parse_args()
    log_dir = tempfile.mkdtemp(prefix='peer-selftest-')
    print(f'logs in {log_dir}', flush=True)
    try:
        asyncio.run(main_async(options, log_dir))
        if not options.k or 'lifetime' in options.k:
            lifetime_tests(log_dir)
    except Exception as error:
        import traceback
        traceback.print_exc()
        R.check('selftest ran to completion', False, repr(error))
    print(f'{R.passed} passed, {R.failed} failed', flush=True)
    if not R.failed and not options.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0 if R.failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
