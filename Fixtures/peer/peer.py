#!/usr/bin/env python3
"""Bluejay test peer: an emulated LE controller for our host + a GATT peripheral.

One process, two Bumble controllers on one link:

  * controller A ("host-facing") is served to the host under test as a plain H4 byte
    stream on a TCP server (127.0.0.1) or a unix socket.  Every host connection gets a
    FRESH controller A; the previous one's links are torn down.
  * controller B is driven in-process by a Bumble Device: a connectable GATT
    peripheral ("Bluejay HRM") advertising with a static random address.  With
    --peripherals N there are N such peripherals on the link, each its own controller
    and Device ("Bluejay HRM 2", ... at the next addresses).

Bumble 0.0.236's controller emulation has bugs that a real host trips over; they are
worked around here in subclasses (Bumble itself is unpatched).  See README.md next to
this file for the CLI, the READY line, the GATT database and the control point.

stdout carries exactly one line (READY ...); everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
import socket
import stat
import struct
import sys
import time

# Taken first thing (before the slow imports) for the parent-death check.
PARENT_PID = os.getppid()

logger = logging.getLogger('peer')

# Set from the command line before anything runs (-vv keeps Bumble's debug strings).
DEBUG_HCI = False

from broadcasters import DEFAULT_ADDRESS as DEFAULT_ADVERTISER_ADDRESS, ALL_KINDS, KINDS, Broadcasters, Phones  # noqa: E402

DEFAULT_ADDRESS = 'F0:0D:B1:E7:00:01'
DEFAULT_NAME = 'Bluejay HRM'
HOST_FACING_PUBLIC_ADDRESS = 'B1:E7:00:00:00:0A'
PERIPHERAL_PUBLIC_ADDRESS = 'B1:E7:00:00:00:0B'  # the next peripherals: ...:0C, ...:0D, ...
# 32: a fleet's scale test (4 gateways, 24 sensors); each is a Bumble device on the link.
MAX_PERIPHERALS = 32
MAX_CENTRALS = 8
CUSTOM_UUID_FORMAT = 'B1E7{:04X}-9D3B-4C7A-8A5E-6F2D0C1B0A00'
MANUFACTURER_COMPANY_ID = 0xFFFF
MANUFACTURER_PAYLOAD = bytes([0xB1, 0xE7])
ADVERTISING_INTERVAL_MS = 100

# LE data length model (see README): connections start at 27 octets each way.
DEFAULT_DATA_OCTETS = 27
DEFAULT_DATA_TIME = 328
MAX_DATA_OCTETS = 251
MAX_DATA_TIME = 2120

# Control point (0006) ATT application error codes.
CP_ERROR_UNKNOWN_COMMAND = 0x80
CP_ERROR_INVALID_PARAMETERS = 0x81
CP_ERROR_BUSY = 0x82
CP_ERROR_NOT_SUBSCRIBED = 0xFD  # CCCD improperly configured

BTSNOOP_EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # 0000-01-01 -> 1970-01-01, in microseconds


# -----------------------------------------------------------------------------
# Command line
# -----------------------------------------------------------------------------
def parse_opcode(text: str) -> int:
    value = int(text, 0)
    if not 0 <= value <= 0xFFFF:
        raise argparse.ArgumentTypeError(f'opcode out of range: {text}')
    return value


def parse_rssi(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a list of dBm values: {text}')
    if not values or any(v < -127 or v > 20 for v in values):
        raise argparse.ArgumentTypeError(f'RSSI out of range -127...20: {text}')
    return values


def parse_irk(text: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not hex: {text}')
    if len(value) != 16:
        raise argparse.ArgumentTypeError(f'an IRK has 16 octets (32 hex digits), not {len(value)}: {text}')
    return value


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Bluejay test peer: emulated controller (H4 over TCP/unix) '
        'linked to an emulated GATT peripheral.'
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument('--port', type=int, default=0,
                       help='TCP port on 127.0.0.1 (default 0: pick a free port)')
    where.add_argument('--unix', metavar='PATH',
                       help='serve on a unix socket at PATH instead of TCP')
    parser.add_argument('--address', default=DEFAULT_ADDRESS,
                        help=f'peripheral static random address (default {DEFAULT_ADDRESS})')
    parser.add_argument('--name', default=DEFAULT_NAME,
                        help=f'peripheral name (default {DEFAULT_NAME!r})')
    parser.add_argument('--peripherals', type=int, default=1, metavar='N',
                        help='number of GATT peripherals on the link (default 1, at most '
                        f'{MAX_PERIPHERALS}); peripheral k > 1 is at --address + k - 1, '
                        'named "NAME k"')
    parser.add_argument('--acl-len-a', type=int, default=27,
                        help="controller A's ACL buffer length reported to the host (default 27)")
    parser.add_argument('--acl-count-a', type=int, default=64,
                        help="controller A's ACL buffer count reported to the host (default 64)")
    parser.add_argument('--nocp-delay-ms', type=float, default=0.0,
                        help='hold Number Of Completed Packets events this long (default 0: '
                        'immediately); makes host ACL credit overruns detectable')
    parser.add_argument('--snoop', metavar='FILE',
                        help="write controller A's HCI traffic as btsnoop (H4, datalink 1002)")
    parser.add_argument('--snoop-flush', action='store_true',
                        help='flush the snoop file after every record')
    parser.add_argument('--mute-opcode', type=parse_opcode, action='append', default=[],
                        metavar='0xNNNN',
                        help='controller A silently never answers this command opcode (repeatable)')
    parser.add_argument('--io-capability', default='none',
                        choices=['none', 'display', 'display-yes-no', 'keyboard',
                                 'keyboard-display'],
                        help="peripheral's SMP IO capability (default none: Just Works)")
    parser.add_argument('--passkey', type=int, default=123456,
                        help='fixed passkey the peripheral displays/enters (default 123456)')
    parser.add_argument('--rssi', type=parse_rssi, default=[-50], metavar='DBM[,DBM...]',
                        help='RSSI of successive advertising reports, cycled (default -50)')
    parser.add_argument('--no-sc', action='store_true',
                        help='offer LE legacy pairing only (no Secure Connections)')
    parser.add_argument('--invalid-public-key', action='store_true',
                        help='send a P-256 public key that is not on the curve (CVE-2018-5383)')
    parser.add_argument('--irk', type=parse_irk, metavar='HEX',
                        help="the peripherals' IRK, 32 hex digits in the order Identity Information "
                        "carries them (default: Bumble's, all zeros)")
    parser.add_argument('--layout', type=int, choices=[1, 2], default=1,
                        help='GATT database layout (default 1); 2 inserts an extra service '
                        'before the test service, so its handles and the Database Hash change')
    parser.add_argument('--att-mtu', type=int, default=517, metavar='N',
                        help='the largest ATT_MTU the peripheral accepts in an MTU exchange '
                        '(default 517; 23 makes long reads and writes take several PDUs)')
    parser.add_argument('--heart-rate-on-subscribe', action='store_true',
                        help='start the 1 Hz heart-rate measurements when a client subscribes to them, as a '
                             'real sensor does (by default they start on the control point command 05 01)')
    parser.add_argument('--l2cap-mtu', type=int, default=2048, metavar='N',
                        help='MTU of the peripheral\'s L2CAP credit-based echo channels (default 2048; 64..65535)')
    parser.add_argument('--l2cap-mps', type=int, default=247, metavar='N',
                        help='MPS of the echo channels (default 247; 64..65533)')
    parser.add_argument('--l2cap-credits', type=int, default=32, metavar='N',
                        help='initial credits the echo channels grant, topped up at half (default 32; 1..65535)')
    parser.add_argument('--two-hosts', action='store_true',
                        help='no Bumble device: TWO host-facing controllers on one link, each on a TCP '
                        'port of its own (READY transport=... transport2=...), for two hosts of ours '
                        '(a central and a peripheral) to reach each other')
    parser.add_argument('--central', action='store_true',
                        help='controller B is a central driven by JSON commands on stdin (see central.py) '
                             'instead of the GATT peripheral: for testing the host as a peripheral')
    parser.add_argument('--centrals', type=int, default=1, metavar='N',
                        help='with --central: N Bumble centrals on the link (controllers B, B2, ...; '
                        'random addresses counting up from --address), each command naming one with '
                        '"central": k (0-based, default 0), for several centrals on our peripheral at once')
    parser.add_argument('--hosts', type=int, default=1, metavar='N',
                        help='serve N host-facing controllers on the one link (default 1), each on a '
                        'TCP port of its own (READY transport=, transport2=, ...): a fleet of hosts '
                        'that hear the same peripherals. With N > 1 host h (0-based) hears '
                        'peripheral p at -40 - 10 * ((p - h) mod N) dBm, so each peripheral has one '
                        'nearest host, and a host connecting does not reset the peripherals\' values')
    parser.add_argument('--sensor-period-ms', type=float, default=0, metavar='MS',
                        help='free-running sensors: every MS each peripheral takes a sample (a 16-bit '
                        'count from 1, wrapping) and notifies it as a Heart Rate Measurement in the '
                        'uint16 format (flags 01) to every client subscribed then; samples taken while '
                        'none is are lost, as with a real sensor (default 0: off)')
    parser.add_argument('--sensor-timestamps', action='store_true',
                        help='with --sensor-period-ms: each sample also carries when it was taken, '
                        'CLOCK_MONOTONIC in ns as 8 octets little-endian after the count (for latency '
                        'measurements on this machine)')
    parser.add_argument('--sensor-direct', action='store_true',
                        help='with --sensor-period-ms (one host): the notifications written straight to the '
                        'host\'s socket through controller A, as the flood\'s fast path does, not through the '
                        'peripheral\'s Bumble stack, which carries about 15,000 a second (make bench offers '
                        'the gateway 100,000)')
    parser.add_argument('--advertisers', type=int, default=0, metavar='N',
                        help='N sensors that only advertise (non-connectable), BTHome, ATC (pvvx) '
                        'and Ruuvi frames in turn (--advertiser-kinds), at --advertiser-address + '
                        'their index; see broadcasters.py (default 0)')
    parser.add_argument('--advertiser-kinds', default=','.join(KINDS), metavar='KIND[,KIND...]',
                        help=f'the advertisers\' formats, in turn, of {",".join(ALL_KINDS)} (default {",".join(KINDS)})')
    parser.add_argument('--advertiser-address', default=DEFAULT_ADVERTISER_ADDRESS, metavar='ADDR',
                        help=f'the first advertiser\'s static random address (default {DEFAULT_ADVERTISER_ADDRESS})')
    parser.add_argument('--advertiser-period-ms', type=float, default=1000, metavar='MS',
                        help='each advertiser takes a reading (packet counter + 1) every MS (default 1000)')
    parser.add_argument('--advertiser-interval-ms', type=float, default=100, metavar='MS',
                        help='and sends its frame every MS (default 100)')
    parser.add_argument('--phone-irk', type=parse_irk, action='append', default=[], metavar='HEX',
                        help='repeatable: a phone advertising (non-connectable, every 100 ms) from resolvable '
                        'private addresses made with this IRK, 32 hex digits most significant first as the '
                        'Core Specification prints keys and the gateway\'s irks: writes them; the log names '
                        'each address (phone K: ADDRESS); SIGUSR1 silences the first phone still advertising')
    parser.add_argument('--rotate-every', type=float, default=900, metavar='S',
                        help='with --phone-irk: each phone takes a new resolvable private address every S '
                        'seconds (default 900, as phones do)')
    parser.add_argument('--exit-on-stdin-eof', action='store_true',
                        help='exit when stdin reaches EOF')
    parser.add_argument('--log', metavar='FILE',
                        help='write logs to FILE instead of stderr')
    parser.add_argument('-v', '--verbose', action='count', default=0,
                        help='-v: debug logs of the peer; -vv: also Bumble debug incl. every HCI packet')
    args = parser.parse_args(argv)
    if not 27 <= args.acl_len_a <= 0xFFFF:
        parser.error('--acl-len-a must be in 27..65535')
    if not 1 <= args.acl_count_a <= 0xFFFF:
        parser.error('--acl-count-a must be in 1..65535')
    if not 23 <= args.att_mtu <= 517:
        parser.error('--att-mtu must be in 23..517')
    if not 64 <= args.l2cap_mtu <= 0xFFFF:
        parser.error('--l2cap-mtu must be in 64..65535')
    if not 64 <= args.l2cap_mps <= 65533:
        parser.error('--l2cap-mps must be in 64..65533')
    if not 1 <= args.l2cap_credits <= 0xFFFF:
        parser.error('--l2cap-credits must be in 1..65535')
    if args.two_hosts:
        # Two host-facing controllers and nothing else: --hosts 2 without the peripherals.
        if args.hosts not in (1, 2):
            parser.error('--two-hosts is --hosts 2 without peripherals; give one or the other')
        args.hosts = 2
    if not 1 <= args.hosts <= 8 or (args.hosts > 1 and args.unix):
        parser.error('--hosts (and --two-hosts) must be in 1..8, on TCP')
    if not 1 <= args.centrals <= MAX_CENTRALS or (args.centrals > 1 and not args.central):
        parser.error(f'--centrals must be in 1..{MAX_CENTRALS}, with --central')
    if not 1 <= args.peripherals <= MAX_PERIPHERALS:
        parser.error(f'--peripherals must be in 1..{MAX_PERIPHERALS}')
    kinds = args.advertiser_kinds.split(',')
    if not 0 <= args.advertisers <= 5000 or not kinds or any(k not in ALL_KINDS for k in kinds):
        parser.error(f'--advertisers must be in 0..5000 and --advertiser-kinds of {",".join(ALL_KINDS)}')
    args.advertiser_kinds = kinds
    if not args.rotate_every > 0:
        parser.error('--rotate-every must be above 0')
    if not 0 < args.advertiser_interval_ms <= args.advertiser_period_ms:
        parser.error('--advertiser-interval-ms must be above 0 and at most --advertiser-period-ms')
    return args


def peripheral_address(base: str, index: int) -> str:
    '''The address of peripheral `index` (0-based): `base` plus `index`, carrying into
    the bytes above but never into the top byte (whose two high bits mark a static
    random address).'''
    value = int(base.replace(':', ''), 16)
    low = ((value & 0xFF_FFFF_FFFF) + index) & 0xFF_FFFF_FFFF
    value = (value & ~0xFF_FFFF_FFFF) | low
    text = f'{value:012X}'
    return ':'.join(text[i:i + 2] for i in range(0, 12, 2))


def peripheral_name(base: str, index: int) -> str:
    '''The name of peripheral `index` (0-based): NAME, then "NAME 2", "NAME 3", ...'''
    return base if index == 0 else f'{base} {index + 1}'


args = parse_args() if __name__ == '__main__' else None

# Imported after argument parsing so that --help is fast.
from bumble import att, gatt, hci, l2cap, ll, pairing, smp  # noqa: E402
from bumble.controller import Controller, LegacyAdvertiser  # noqa: E402
from bumble.core import PhysicalTransport  # noqa: E402
from bumble.device import (  # noqa: E402
    AdvertisingType,
    Device,
    DeviceConfiguration,
)
from bumble.gatt_server import Server as GattServer  # noqa: E402
from bumble.host import Host  # noqa: E402
from bumble.link import LocalLink  # noqa: E402
from bumble.snoop import Snooper  # noqa: E402
from bumble.transport.common import PacketParser  # noqa: E402
from bumble.core import InvalidPacketError  # noqa: E402

from hang_guard import HANG_GUARD  # noqa: E402


# -----------------------------------------------------------------------------
# Raw HCI packet builders (H4 framing included)
# -----------------------------------------------------------------------------
def h4_event(code: int, params: bytes) -> bytes:
    return bytes([hci.HCI_EVENT_PACKET, code, len(params)]) + params


def h4_le_meta(subevent: int, params: bytes) -> bytes:
    return h4_event(0x3E, bytes([subevent]) + params)


def h4_command_status(status: int, opcode: int) -> bytes:
    return h4_event(0x0F, struct.pack('<BBH', status, 1, opcode))


def h4_command_complete(opcode: int, return_parameters: bytes) -> bytes:
    return h4_event(0x0E, struct.pack('<BH', 1, opcode) + return_parameters)


def address_bytes(address: hci.Address) -> bytes:
    return bytes(address.address_bytes)


def pack_address_type(address: hci.Address) -> int:
    return int(address.address_type)


# -----------------------------------------------------------------------------
# btsnoop writer
# -----------------------------------------------------------------------------
class BtSnoopWriter:
    '''btsnoop v1, datalink 1002 (H4).  Flags: bit0 = direction (0 host->controller,
    1 controller->host), bit1 = command/event.  Directions are the host's view.'''

    def __init__(self, path: str, flush_each: bool):
        self.file = open(path, 'wb')
        self.flush_each = flush_each
        self.file.write(b'btsnoop\0' + struct.pack('>II', 1, 1002))
        self.file.flush()

    def record(self, packet: bytes, controller_to_host: bool) -> None:
        if self.file is None:
            return
        flags = 1 if controller_to_host else 0
        if packet[0] in (hci.HCI_COMMAND_PACKET, hci.HCI_EVENT_PACKET):
            flags |= 2
        ts = int(time.time() * 1_000_000) + BTSNOOP_EPOCH_DELTA_US
        n = len(packet)
        self.file.write(struct.pack('>IIIIq', n, n, flags, 0, ts) + packet)
        if self.flush_each:
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.flush()
            self.file.close()
            self.file = None


# -----------------------------------------------------------------------------
# Link (bug 1: LocalLink tags LE ACL data with the sender's *random* address)
# -----------------------------------------------------------------------------
class PeerLink(LocalLink):
    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address,
                                         transport, data)
        destination_controller = self.find_le_controller(destination_address)
        # The source is the address the SENDER uses on this connection, which is
        # its public address when it connected/advertised with a public address.
        connection = sender_controller.le_connections.get(destination_address)
        source_address = (connection.self_address if connection is not None
                          else sender_controller.random_address)
        if destination_controller is not None:
            asyncio.get_running_loop().call_soon(
                destination_controller.on_link_acl_data, source_address, transport, data
            )

    def peer_of(self, controller, connection):
        '''(controller, connection) at the other end of an LE connection, or (None, None).'''
        other = self.find_le_controller(connection.peer_address)
        if other is None or other is controller:
            return None, None
        return other, other.le_connections.get(connection.self_address)


# -----------------------------------------------------------------------------
# Controller fixes shared by both controllers
# -----------------------------------------------------------------------------
@dataclasses.dataclass
class LinkState:
    '''Per-connection state that stock Bumble does not keep.'''
    tx_phy: int = 1
    rx_phy: int = 1
    tx_octets: int = DEFAULT_DATA_OCTETS
    tx_time: int = DEFAULT_DATA_TIME
    rx_octets: int = DEFAULT_DATA_OCTETS
    rx_time: int = DEFAULT_DATA_TIME


def link_state(connection) -> LinkState:
    state = getattr(connection, '_peer_link_state', None)
    if state is None:
        state = LinkState()
        connection._peer_link_state = state
    return state


class PeerLegacyAdvertiser(LegacyAdvertiser):
    '''Stock sends nothing unless the type is ADV_IND; also emit scannable and
    non-connectable undirected advertising (as AdvInd; receivers look up the type).'''

    def send_advertising_data(self) -> None:
        if not self.enabled:
            return
        if self.advertising_type in (0, 2, 3):  # ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND
            self.controller.send_advertising_pdu(
                ll.AdvInd(advertiser_address=self.address, data=self.advertising_data)
            )


@dataclasses.dataclass
class AdvertiserInfo:
    legacy: bool
    connectable: bool
    scannable: bool
    directed: bool
    scan_response: bytes
    sid: int
    legacy_type: int  # legacy report event type for the ADV PDU


# The advertisers of --advertisers (address octets as PDUs carry them): sensors that only
# broadcast, ADV_NONCONN_IND (legacy report type 3).
BROADCASTING: set = set()
BROADCAST_INFO = AdvertiserInfo(legacy=True, connectable=False, scannable=False, directed=False,
                                scan_response=b'', sid=0xFF, legacy_type=3)


class PeerController(Controller):
    '''Controller with the fixes for bugs 3, 4, 5, 6, 7 and 13.'''

    def __init__(self, *args_, **kwargs):
        super().__init__(*args_, **kwargs)
        self.le_legacy_advertiser = PeerLegacyAdvertiser(self)
        self.loop = asyncio.get_running_loop()
        self.scan_api = 'legacy'           # which scan enable command the host used
        self.legacy_scan_active = False
        self.extended_scan_active = False
        self.seen_reports: set = set()
        self.scan_timeout_handle: asyncio.TimerHandle | None = None
        self.rssi_values = [-50]           # cycled, one per report (--rssi)
        self.rssi_index = 0

    # --- bug 13: no eager debug strings on the hot path --------------------------
    def send_hci_packet(self, packet) -> None:
        if DEBUG_HCI and not isinstance(packet, (bytes, bytearray)):
            return super().send_hci_packet(packet)
        if self.host:
            self.loop.call_soon(self.host.on_packet, bytes(packet))

    def on_hci_packet(self, packet) -> None:
        if DEBUG_HCI:
            return super().on_hci_packet(packet)
        match packet:
            case hci.HCI_Command():
                self.on_hci_command_packet(packet)
            case hci.HCI_AclDataPacket():
                self.on_hci_acl_data_packet(packet)
            case hci.HCI_Event():
                self.on_hci_event_packet(packet)
            case _:
                logger.warning('unsupported packet type %d from host', packet.hci_packet_type)

    # --- bug 4: every command gets an answer --------------------------------------
    def on_packet(self, packet: bytes) -> None:
        try:
            hci_packet = hci.HCI_Packet.from_bytes(packet)
        except Exception as error:  # unparsable: answer commands anyway
            logger.warning('cannot parse packet from host (%s): %s', error, packet.hex())
            if packet[0] == hci.HCI_COMMAND_PACKET and len(packet) >= 3:
                opcode = struct.unpack_from('<H', packet, 1)[0]
                known = opcode in hci.HCI_Command.command_classes
                self.send_hci_packet(h4_command_status(0x12 if known else 0x01, opcode))
            return
        self.on_hci_packet(hci_packet)

    def on_hci_command_packet(self, command) -> None:
        opcode = command.op_code
        if opcode == hci.HCI_HOST_NUMBER_OF_COMPLETED_PACKETS_COMMAND:
            return  # accepted and ignored; this command normally has no response
        is_sync = isinstance(command, hci.HCI_SyncCommand)
        # Errors the peer generates itself are always Command Status events (a
        # Command Complete would need the command's full return parameters).
        handler = getattr(self, f'on_{command.name.lower()}', None)
        if handler is None:
            logger.info('unsupported command %s (0x%04X): Unknown HCI Command',
                        command.name, opcode)
            self.send_hci_packet(h4_command_status(0x01, opcode))
            return
        try:
            result = handler(command)
        except Exception:
            logger.exception('exception in handler for %s', command.name)
            self.send_hci_packet(h4_command_status(0x1F, opcode))
            return
        if is_sync:
            if result is None:
                logger.error('sync handler for %s returned nothing', command.name)
                self.send_hci_packet(h4_command_status(0x1F, opcode))
                return
            self.send_hci_packet(h4_command_complete(opcode, bytes(result)))
        elif result is not None:
            status = getattr(result, 'status', 0x01)
            self.send_hci_packet(h4_command_status(int(status), opcode))

    # --- bug 3: LE Set PHY / LE Read PHY ------------------------------------------
    @staticmethod
    def _choose_phy(no_preference: bool, mask: int, current: int) -> int:
        if no_preference:
            mask = 0b111
        for bit, phy in ((0b010, 2), (0b001, 1), (0b100, 3)):
            if mask & bit:
                return phy
        return current

    def on_hci_le_set_phy_command(self, command) -> None:
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            self.send_hci_packet(h4_command_status(0x02, command.op_code))
            return None
        self.send_hci_packet(h4_command_status(0x00, command.op_code))
        state = link_state(connection)
        tx = self._choose_phy(bool(command.all_phys & 1), command.tx_phys, state.tx_phy)
        rx = self._choose_phy(bool(command.all_phys & 2), command.rx_phys, state.rx_phy)
        changed = (tx, rx) != (state.tx_phy, state.rx_phy)
        state.tx_phy, state.rx_phy = tx, rx
        handle = connection.handle
        self.loop.call_soon(self.send_hci_packet, h4_le_meta(
            0x0C, struct.pack('<BHBB', 0, handle, tx, rx)))
        other, other_connection = self.link.peer_of(self, connection)
        if other_connection is not None:
            other_state = link_state(other_connection)
            other_state.tx_phy, other_state.rx_phy = rx, tx
            if changed:
                self.loop.call_soon(other.send_hci_packet, h4_le_meta(
                    0x0C, struct.pack('<BHBB', 0, other_connection.handle, rx, tx)))
        return None

    def on_hci_le_read_phy_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            return hci.HCI_LE_Read_PHY_ReturnParameters(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=command.connection_handle, tx_phy=0, rx_phy=0)
        state = link_state(connection)
        return hci.HCI_LE_Read_PHY_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=command.connection_handle,
            tx_phy=state.tx_phy, rx_phy=state.rx_phy)

    # --- bug 5: LE Set Data Length --------------------------------------------------
    supported_max_tx_octets = MAX_DATA_OCTETS
    supported_max_tx_time = MAX_DATA_TIME
    supported_max_rx_octets = MAX_DATA_OCTETS
    supported_max_rx_time = MAX_DATA_TIME

    def on_hci_le_set_data_length_command(self, command):
        handle = command.connection_handle
        connection = self.find_le_connection_by_handle(handle)
        if connection is None:
            return hci.HCI_StatusAndConnectionHandleReturnParameters(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=handle)
        if not (27 <= command.tx_octets <= 251 and 0x0148 <= command.tx_time <= 0x4290):
            return hci.HCI_StatusAndConnectionHandleReturnParameters(
                status=hci.HCI_ErrorCode.INVALID_HCI_COMMAND_PARAMETERS_ERROR,
                connection_handle=handle)
        state = link_state(connection)
        before = dataclasses.astuple(state)
        state.tx_octets = command.tx_octets
        state.tx_time = max(DEFAULT_DATA_TIME, min(command.tx_time, MAX_DATA_TIME))
        # The peer answers the LL_LENGTH_REQ with its maximum.
        state.rx_octets, state.rx_time = MAX_DATA_OCTETS, MAX_DATA_TIME
        if dataclasses.astuple(state) != before:
            self.loop.call_soon(self.send_hci_packet, h4_le_meta(0x07, struct.pack(
                '<HHHHH', handle, state.tx_octets, state.tx_time,
                state.rx_octets, state.rx_time)))
        other, other_connection = self.link.peer_of(self, connection)
        if other_connection is not None:
            other_state = link_state(other_connection)
            other_before = dataclasses.astuple(other_state)
            other_state.tx_octets, other_state.tx_time = state.rx_octets, state.rx_time
            other_state.rx_octets, other_state.rx_time = state.tx_octets, state.tx_time
            if dataclasses.astuple(other_state) != other_before:
                self.loop.call_soon(other.send_hci_packet, h4_le_meta(0x07, struct.pack(
                    '<HHHHH', other_connection.handle, other_state.tx_octets,
                    other_state.tx_time, other_state.rx_octets, other_state.rx_time)))
        return hci.HCI_StatusAndConnectionHandleReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=handle)

    # --- bug 6: LE Create Connection Cancel -----------------------------------------
    def on_hci_le_create_connection_cancel_command(self, _command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        peer = pending.peer_address
        event = h4_le_meta(0x01, struct.pack('<BHBB', 0x02, 0, 0, pack_address_type(peer))
                           + address_bytes(peer) + struct.pack('<HHHB', 0, 0, 0, 0))
        # After the Command Complete of the cancel.
        self.loop.call_soon(self.send_hci_packet, event)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    # --- bug 7: advertising reports ---------------------------------------------------
    def on_hci_le_set_scan_parameters_command(self, command):
        result = super().on_hci_le_set_scan_parameters_command(command)
        if result.status == hci.HCI_ErrorCode.SUCCESS:
            self.legacy_scan_active = command.le_scan_type == 1
        return result

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        if self.le_scan_enable:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        result = super().on_hci_le_set_extended_scan_parameters_command(command)
        scan_types = getattr(command, 'scan_types', None) or [0]
        self.extended_scan_active = any(t == 1 for t in scan_types)
        return result

    def _start_scan(self, api: str, enable: bool, filter_duplicates: int) -> None:
        if self.scan_timeout_handle is not None:
            self.scan_timeout_handle.cancel()
            self.scan_timeout_handle = None
        if enable:
            self.scan_api = api
            if not self.le_scan_enable or filter_duplicates:
                self.seen_reports = set()
        self.le_scan_enable = enable
        self.filter_duplicates = bool(filter_duplicates)

    def on_hci_le_set_scan_enable_command(self, command):
        self._start_scan('legacy', bool(command.le_scan_enable), command.filter_duplicates)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self._start_scan('extended', bool(command.enable), command.filter_duplicates)
        if command.enable and command.duration:
            self.scan_timeout_handle = self.loop.call_later(
                command.duration / 100.0, self._on_scan_duration_elapsed)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def _on_scan_duration_elapsed(self) -> None:
        self.scan_timeout_handle = None
        if self.le_scan_enable:
            self.le_scan_enable = False
            self.send_hci_packet(h4_le_meta(0x11, b''))  # LE Scan Timeout

    def _advertiser_info(self, pdu) -> AdvertiserInfo:
        if bytes(pdu.advertiser_address.address_bytes) in BROADCASTING:
            return BROADCAST_INFO  # an advertiser of broadcasters.py: no controller owns it
        for c in list(self.link.controllers):
            if c is self:
                continue
            if isinstance(pdu, ll.AdvInd):
                adv = c.le_legacy_advertiser
                if adv.enabled and adv.address == pdu.advertiser_address:
                    t = adv.advertising_type
                    return AdvertiserInfo(
                        legacy=True, connectable=t in (0, 1, 4), scannable=t in (0, 2),
                        directed=t in (1, 4), scan_response=bytes(adv.scan_response_data),
                        sid=0xFF, legacy_type=1 if t == 4 else t)
            else:
                for s in c.advertising_sets.values():
                    if s.enabled and s.address == pdu.advertiser_address and s.parameters:
                        props = int(s.parameters.advertising_event_properties)
                        connectable = bool(props & 1)
                        scannable = bool(props & 2)
                        directed = bool(props & 4)
                        legacy = bool(props & 0x10)
                        if directed:
                            legacy_type = 1
                        elif connectable:
                            legacy_type = 0
                        elif scannable:
                            legacy_type = 2
                        else:
                            legacy_type = 3
                        return AdvertiserInfo(
                            legacy=legacy, connectable=connectable, scannable=scannable,
                            directed=directed, scan_response=bytes(s.scan_response_data),
                            sid=0xFF if legacy else s.parameters.advertising_sid,
                            legacy_type=legacy_type)
        if isinstance(pdu, ll.AdvInd):
            return AdvertiserInfo(True, True, False, False, b'', 0xFF, 0)
        return AdvertiserInfo(False, True, False, False, b'', pdu.sid, 0)

    def _report(self, pdu, info: AdvertiserInfo, scan_response: bool, data: bytes) -> None:
        address = pdu.advertiser_address
        if self.filter_duplicates:
            key = (address_bytes(address), pack_address_type(address), scan_response, data)
            if key in self.seen_reports:
                return
            self.seen_reports.add(key)
        rssi_dbm = self.rssi_values[self.rssi_index % len(self.rssi_values)]
        self.rssi_index += 1
        rssi_by_address = getattr(self, 'rssi_by_address', None)
        if rssi_by_address is not None:
            rssi_dbm = rssi_by_address.get(address_bytes(address), rssi_dbm)
        rssi = rssi_dbm & 0xFF
        if self.scan_api == 'legacy':
            event_type = 4 if scan_response else info.legacy_type
            self.send_hci_packet(h4_le_meta(0x02, struct.pack(
                '<BBB', 1, event_type, pack_address_type(address)) + address_bytes(address)
                + bytes([len(data)]) + data + bytes([rssi])))
            return
        event_type = 0
        if info.connectable:
            event_type |= 0x01
        if info.scannable:
            event_type |= 0x02
        if info.directed:
            event_type |= 0x04
        if scan_response:
            event_type |= 0x08
        if info.legacy:
            event_type |= 0x10
        if len(data) > 229:
            data = data[:229]
            event_type |= 0x40  # data status: incomplete, truncated
        self.send_hci_packet(h4_le_meta(0x0D, struct.pack(
            '<BHB', 1, event_type, pack_address_type(address)) + address_bytes(address)
            + struct.pack('<BBBbbHB', 1, 0 if info.legacy else 1, info.sid,
                          127, rssi_dbm, 0, 0)
            + bytes(6) + bytes([len(data)]) + data))

    def on_advertising_pdu(self, pdu) -> None:
        # A peripheral gone out of range (control point 0x0C): nothing of it is heard,
        # so nothing connects to it either.
        if bytes(pdu.advertiser_address.address_bytes) in VANISHED:
            return
        info = self._advertiser_info(pdu)
        if self.le_scan_enable and (self.scan_api == 'extended' or info.legacy):
            self._report(pdu, info, False, bytes(pdu.data))
            active = (self.legacy_scan_active if self.scan_api == 'legacy'
                      else self.extended_scan_active)
            if active and info.scannable:
                self._report(pdu, info, True, info.scan_response)
        # Periodic advertising sync and pending connections: stock code, minus its
        # reports; a non-connectable advertiser must not complete a connection.
        saved_pending = self.pending_le_connection
        if saved_pending is not None and not info.connectable:
            self.pending_le_connection = None
        saved_scan, self.le_scan_enable = self.le_scan_enable, False
        try:
            super().on_advertising_pdu(pdu)
        finally:
            self.le_scan_enable = saved_scan
            if saved_pending is not None and not info.connectable:
                self.pending_le_connection = saved_pending


# -----------------------------------------------------------------------------
# Controller A: the one our host talks to
# -----------------------------------------------------------------------------
# The advertiser addresses (address bytes) of peripherals that went out of range (control
# point 0x0C): the host hears and reaches none of them until a new host session starts.
VANISHED: set = set()


class HostFacingController(PeerController):
    '''Adds: direct output to the session (with snoop), buffer sizes from the CLI,
    controller->host ACL fragmentation (bug 8), optional NOCP delay and host
    flow-control violation checks.'''

    def __init__(self, session: 'HostSession', options, **kwargs):
        super().__init__('A', **kwargs)
        self.session: HostSession | None = session
        self.le_acl_data_packet_length = options.acl_len_a
        self.total_num_le_acl_data_packets = options.acl_count_a
        self.acl_data_packet_length = options.acl_len_a
        self.total_num_acl_data_packets = options.acl_count_a
        self.nocp_delay = options.nocp_delay_ms / 1000.0
        self.rssi_values = options.rssi
        self.outstanding: dict[int, int] = {}      # host ACL packets not yet completed
        self.pending_nocp: dict[int, int] = {}     # completions held back (nocp delay)
        self.nocp_timer: asyncio.TimerHandle | None = None
        self.supported_commands = set(Controller.supported_commands) | {
            hci.HCI_READ_LOCAL_SUPPORTED_COMMANDS_COMMAND,
            hci.HCI_READ_LOCAL_EXTENDED_FEATURES_COMMAND,
            hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
            hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
            hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
            hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND,
            hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
            hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND,
            hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
            hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND,
            hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
            hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND,
            hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
            hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND,
        }

    # Output ------------------------------------------------------------------------
    def send_hci_packet(self, packet) -> None:
        if isinstance(packet, hci.HCI_Number_Of_Completed_Packets_Event):
            self._on_packets_completed(packet)
            return
        data = bytes(packet)
        if DEBUG_HCI:
            logger.debug('A >>> host: %s', data.hex()
                         if isinstance(packet, (bytes, bytearray)) else packet)
        if data[0] == hci.HCI_EVENT_PACKET and data[1] == 0x05:  # Disconnection Complete
            self._forget_handle(struct.unpack_from('<H', data, 4)[0])
        if self.session is not None:
            self.session.send_to_host(data)

    def _on_packets_completed(self, event) -> None:
        for handle, count in zip(event.connection_handles, event.num_completed_packets):
            if self.nocp_delay > 0:
                self.pending_nocp[handle] = self.pending_nocp.get(handle, 0) + count
            else:
                self._write_nocp({handle: count})
        if self.pending_nocp and self.nocp_timer is None:
            self.nocp_timer = self.loop.call_later(self.nocp_delay, self._flush_nocp)

    def _flush_nocp(self) -> None:
        self.nocp_timer = None
        pending, self.pending_nocp = self.pending_nocp, {}
        if pending:
            self._write_nocp(pending)

    def _write_nocp(self, completed: dict[int, int]) -> None:
        items = list(completed.items())
        params = bytes([len(items)])
        params += b''.join(struct.pack('<H', h) for h, _ in items)
        params += b''.join(struct.pack('<H', n) for _, n in items)
        for handle, count in items:
            self.outstanding[handle] = max(0, self.outstanding.get(handle, 0) - count)
        if self.session is not None:
            self.session.send_to_host(h4_event(0x13, params))

    def _forget_handle(self, handle: int) -> None:
        # After Disconnection Complete the host counts the handle's packets as done.
        self.outstanding.pop(handle, None)
        self.pending_nocp.pop(handle, None)

    # Input -------------------------------------------------------------------------
    def on_hci_acl_data_packet(self, packet) -> None:
        handle = packet.connection_handle
        if len(packet.data) > self.le_acl_data_packet_length:
            logger.error('PROTOCOL-VIOLATION: host ACL packet of %d bytes on handle 0x%04X '
                         'exceeds the buffer length %d', len(packet.data), handle,
                         self.le_acl_data_packet_length)
        if self.find_connection_by_handle(handle) is not None:
            in_flight = sum(self.outstanding.values())
            if in_flight >= self.total_num_le_acl_data_packets:
                logger.error('PROTOCOL-VIOLATION: host sent an ACL packet with %d packets '
                             'already outstanding (buffer count %d)', in_flight,
                             self.total_num_le_acl_data_packets)
            self.outstanding[handle] = self.outstanding.get(handle, 0) + 1
        super().on_hci_acl_data_packet(packet)

    # bug 8: controller->host ACL fragmented to the LL payload size ------------------
    def on_link_acl_data(self, sender_address, transport, data) -> None:
        if transport != PhysicalTransport.LE:
            return super().on_link_acl_data(sender_address, transport, data)
        connection = self.le_connections.get(sender_address)
        if connection is None:
            logger.debug('ACL from %s without a connection (dropped)', sender_address)
            return
        self.send_acl_to_host(connection, data)

    def send_acl_to_host(self, connection, pdu: bytes) -> None:
        if self.session is None:
            return
        size = link_state(connection).rx_octets
        handle = connection.handle
        out = []
        for offset in range(0, len(pdu), size):
            chunk = pdu[offset:offset + size]
            pb = 0x2000 if offset == 0 else 0x1000
            out.append(struct.pack('<BHH', hci.HCI_ACL_DATA_PACKET, handle | pb, len(chunk))
                       + chunk)
        self.session.send_many_to_host(out)

    # Reset is handled by the session (fresh controller), see HostSession.on_packet.

    def teardown(self, reason: int) -> None:
        '''Drop every link (the peer sees a disconnection) and leave the link.'''
        for connection in list(self.le_connections.values()):
            try:
                connection.send_ll_control_pdu(ll.TerminateInd(reason))
            except Exception:
                logger.exception('while terminating a link')
        self.le_connections.clear()
        self.pending_le_connection = None
        self.le_scan_enable = False
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        for timer in (self.scan_timeout_handle, self.nocp_timer):
            if timer is not None:
                timer.cancel()
        self.session = None
        try:
            self.link.remove_controller(self)
        except KeyError:
            pass


# -----------------------------------------------------------------------------
# Host for the peripheral (bug 13)
# -----------------------------------------------------------------------------
class PeerHost(Host):
    def send_hci_packet(self, packet) -> None:
        if DEBUG_HCI:
            return super().send_hci_packet(packet)
        data = bytes(packet)
        if self.snooper:
            self.snooper.snoop(data, Snooper.Direction.HOST_TO_CONTROLLER)
        if self.hci_sink:
            self.hci_sink.on_packet(data)

    def on_hci_packet(self, packet) -> None:
        if DEBUG_HCI:
            return super().on_hci_packet(packet)
        if self.snooper:
            self.snooper.snoop(bytes(packet), Snooper.Direction.CONTROLLER_TO_HOST)
        match packet:
            case hci.HCI_Event():
                self.on_hci_event_packet(packet)
            case hci.HCI_AclDataPacket():
                self.on_hci_acl_data_packet(packet)
            case hci.HCI_Command():
                self.on_hci_command_packet(packet)
            case hci.HCI_SynchronousDataPacket():
                self.on_hci_sco_data_packet(packet)
            case hci.HCI_IsoDataPacket():
                self.on_hci_iso_data_packet(packet)
            case _:
                logger.warning('unknown packet type %d', packet.hci_packet_type)


# -----------------------------------------------------------------------------
# GATT server with explicit permission checks (bug 11)
# -----------------------------------------------------------------------------
@dataclasses.dataclass
class AccessPolicy:
    write_request: bool      # Write Request / Prepare+Execute allowed
    write_command: bool      # Write Command (without response) allowed


class PeerGattServer(GattServer):
    '''Stock server does not check WRITEABLE or the properties.  For the peer's own
    characteristics (those in `policies`): Write Request / Prepare Write to a
    characteristic without the WRITE property -> 0x03; a Write Command to one without
    WRITE_WITHOUT_RESPONSE is ignored.  Reads are refused in the value callbacks.'''

    policies: dict[int, AccessPolicy]
    # Connection handles whose next ATT request goes unanswered (control point 0x0A).
    muted: set[int]

    # Requests that expect a response (Core Vol 3, Part F, 3.4.8).
    REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}

    def on_gatt_pdu(self, bearer, att_pdu):
        handle = getattr(bearer, 'handle', None)
        if handle in self.muted and att_pdu.op_code in self.REQUESTS:
            self.muted.discard(handle)
            logger.info('control point 0x0A: not answering %s', att_pdu.name)
            return
        super().on_gatt_pdu(bearer, att_pdu)

    def _refuse(self, bearer, request) -> None:
        self.send_response(bearer, att.ATT_Error_Response(
            request_opcode_in_error=request.op_code,
            attribute_handle_in_error=request.attribute_handle,
            error_code=att.ATT_WRITE_NOT_PERMITTED_ERROR))

    def on_att_write_request(self, bearer, request):
        policy = self.policies.get(request.attribute_handle)
        if policy is not None and not policy.write_request:
            return self._refuse(bearer, request)
        return super().on_att_write_request(bearer, request)

    def on_att_prepare_write_request(self, bearer, request):
        policy = self.policies.get(request.attribute_handle)
        if policy is not None and not policy.write_request:
            return self._refuse(bearer, request)
        return super().on_att_prepare_write_request(bearer, request)

    def write_cccd(self, bearer, characteristic, value) -> None:
        super().write_cccd(bearer, characteristic, value)
        listener = getattr(self, 'on_cccd_written', None)
        if listener is not None:
            listener(bearer, characteristic, bytes(value))

    def on_att_write_command(self, bearer, request):
        policy = self.policies.get(request.attribute_handle)
        if policy is not None and not policy.write_command:
            logger.info('ignoring Write Command to handle 0x%04X (not permitted)',
                        request.attribute_handle)
            return None
        return super().on_att_write_command(bearer, request)


def read_not_permitted(_connection):
    raise att.ATT_Error(att.ATT_READ_NOT_PERMITTED_ERROR)


# -----------------------------------------------------------------------------
# The peripheral application: GATT database, control point, flood
# -----------------------------------------------------------------------------
def custom_uuid(short: int) -> str:
    return CUSTOM_UUID_FORMAT.format(short)


# The tolerance service's oversized value: 600 octets, a pattern unlike the 512-octet one.
OVERSIZED_VALUE = bytes((i * 7 + 3) % 256 for i in range(600))


def fix_include_declarations(server) -> None:
    '''Bumble 0.0.236's IncludedServiceDeclaration packs the UUID with '2s', so a 128-bit
    UUID is cut to its first two octets. Core Vol 3 Part G 3.2: the UUID is present only
    when it is a 16-bit UUID; a 128-bit one is left out (a 4-octet value).'''
    for attribute in server.attributes:
        if isinstance(attribute, gatt.IncludedServiceDeclaration):
            service = attribute.service
            uuid = bytes(service.uuid)
            attribute.value = struct.pack('<HH', service.handle, service.end_group_handle) + (
                uuid if len(uuid) == 2 else b'')


def build_advertising_data() -> bytes:
    flags = bytes([2, 0x01, 0x06])
    uuids = bytes([5, 0x03]) + struct.pack('<HH', 0x180D, 0x180F)
    manufacturer = bytes([3 + len(MANUFACTURER_PAYLOAD), 0xFF]) + struct.pack(
        '<H', MANUFACTURER_COMPANY_ID) + MANUFACTURER_PAYLOAD
    return flags + uuids + manufacturer


def build_scan_response_data(name: str, complete_name_first: bool = False) -> bytes:
    '''Local name + the custom service's 128-bit UUID.  A name too long for both is cut
    and sent as a shortened name; with `complete_name_first` (the peripherals after the
    first, whose "NAME k" would lose the k) the UUID is left out instead.'''
    uuid128 = bytes([17, 0x07]) + bytes.fromhex(custom_uuid(1).replace('-', ''))[::-1]
    name_bytes = name.encode('utf-8')
    room = 31 - len(uuid128) - 2
    if complete_name_first and len(name_bytes) > room:
        room = 31 - 2
        uuid128 = b''
    if len(name_bytes) <= room:
        name_field = bytes([len(name_bytes) + 1, 0x09]) + name_bytes
    else:
        short = name_bytes[:room]
        name_field = bytes([len(short) + 1, 0x08]) + short
    return name_field + uuid128


class PeripheralApp:
    def __init__(self, server: 'PeerServer', device: Device, name: str, label: str,
                 heart_rate_on_subscribe: bool = False):
        self.server = server
        self.device = device
        self.name = name
        self.label = label  # 'peripheral', then 'peripheral 2', ... in the log
        self.hr_tasks: dict[int, asyncio.Task] = {}
        self.flood_tasks: dict[int, asyncio.Task] = {}
        # What a server keeps for a bonded client (Core 6.0 Vol 3 Part G 2.5.2, 3.3.3.3),
        # which Bumble 0.0.236 does not (its CCCDs go with the link): per bond (the
        # central's address, as the keystore names it) the CCCD values written while bonded,
        # restored when the bond encrypts a new link; and the handle range that changed while
        # it was away, indicated as Service Changed then.
        self.bonded_cccds: dict[str, dict[int, bytes]] = {}
        self.change_unaware: dict[str, tuple[int, int]] = {}
        self.bond_keys: dict[int, str] = {}      # connection handle -> its bond, once known
        self.change_on_disconnection: set[int] = set()  # control point 0x0B
        self.added_service = None
        self.sample = 0  # --sensor-period-ms: the last sample taken (never reset)
        self.reset_values()
        self._build_database()
        device.gatt_server.on_cccd_written = self._cccd_written
        device.on('connection', self._on_connection)
        if heart_rate_on_subscribe:
            # As a real sensor: measurements while the client's CCCD asks for them.
            self.hrm.on('subscription', lambda bearer, notify, _indicate: self._heart_rate(
                getattr(bearer, 'connection', bearer), notify))

    def reset_values(self) -> None:
        self.body_sensor_location = b'\x01'
        self.battery_level = 87
        self.long_value = bytes(i % 256 for i in range(512))
        # Longer than the specification's 512 octets (Core Vol 3 Part F 3.2.9), as some
        # peripherals serve: a client must read it whole, or refuse it by its own limit.
        self.oversized_value = OVERSIZED_VALUE
        self.indicate_value = b'\x00'
        self.echo_value = b''
        self.hr_bpm = 60

    def _char(self, uuid, properties, permissions, read=None, write=None, value=None):
        if value is None:
            value = gatt.CharacteristicValue(read=read or read_not_permitted, write=write)
        return gatt.Characteristic(uuid, properties, permissions, value)

    def _build_database(self) -> None:
        P = gatt.Characteristic.Properties
        R = gatt.Characteristic.Permissions.READABLE
        W = gatt.Characteristic.Permissions.WRITEABLE
        NONE = gatt.Characteristic.Permissions(0)

        self.hrm = self._char(gatt.GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, P.NOTIFY, NONE)
        self.body_sensor = self._char(
            gatt.GATT_BODY_SENSOR_LOCATION_CHARACTERISTIC, P.READ | P.WRITE, R | W,
            read=lambda _c: self.body_sensor_location, write=self._write_body_sensor)
        self.manufacturer = self._char(
            gatt.GATT_MANUFACTURER_NAME_STRING_CHARACTERISTIC, P.READ, R,
            read=lambda _c: b'Bluejay')
        self.serial = self._char(
            gatt.GATT_SERIAL_NUMBER_STRING_CHARACTERISTIC, P.READ, R,
            read=lambda _c: b'BJ-0001')
        self.battery = self._char(
            gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC, P.READ | P.NOTIFY, R,
            read=lambda _c: bytes([self.battery_level]))
        self.long = self._char(
            custom_uuid(2), P.READ | P.WRITE, R | W,
            read=lambda _c: self.long_value, write=self._write_long)
        self.indicate = self._char(
            custom_uuid(3), P.READ | P.INDICATE, R, read=lambda _c: self.indicate_value)
        self.encrypted = self._char(
            custom_uuid(4), P.READ, R | gatt.Characteristic.Permissions.READ_REQUIRES_ENCRYPTION,
            read=lambda _c: b'Bluejay secret')
        self.echo = self._char(
            custom_uuid(5), P.WRITE_WITHOUT_RESPONSE | P.NOTIFY, W, write=self._write_echo)
        self.control = self._char(
            custom_uuid(6), P.WRITE, W, write=self._write_control)
        self.stream = self._char(custom_uuid(7), P.NOTIFY, NONE)
        self.read_only = self._char(
            custom_uuid(8), P.READ, R, read=lambda _c: b'Bluejay read-only')

        # The tolerance service, after everything else (so no handle above moves): a
        # characteristic with a 600-octet value, and an included secondary service with a
        # 128-bit UUID, whose include declaration therefore carries no UUID (Core Vol 3
        # Part G 3.2): a client must read the included service's declaration to learn it.
        self.included_value = self._char(
            custom_uuid(0x0202), P.READ, R, read=lambda _c: b'Bluejay included')
        self.included_service = gatt.Service(custom_uuid(0x0201), [self.included_value], primary=False)
        self.oversized = self._char(
            custom_uuid(0x0203), P.READ, R, read=lambda _c: self.oversized_value)
        tolerance = gatt.Service(custom_uuid(0x0200), [self.oversized],
                                 included_services=[self.included_service])

        # --layout 2: one more service (3 handles) right before the test service, so the
        # test service and everything after it move and the Database Hash changes.
        extra = []
        if self.server.options.layout == 2:
            self.layout_marker = self._char(
                custom_uuid(0x0101), P.READ, R, read=lambda _c: b'layout 2')
            extra = [gatt.Service(custom_uuid(0x0100), [self.layout_marker])]

        self.device.add_services([
            gatt.Service(gatt.GATT_HEART_RATE_SERVICE, [self.hrm, self.body_sensor]),
            gatt.Service(gatt.GATT_DEVICE_INFORMATION_SERVICE,
                         [self.manufacturer, self.serial]),
            gatt.Service(gatt.GATT_BATTERY_SERVICE, [self.battery]),
            *extra,
            gatt.Service(custom_uuid(1), [self.long, self.indicate, self.encrypted,
                                          self.echo, self.control, self.stream,
                                          self.read_only]),
            # The included service first: Bumble registers an included service that is not
            # yet in the database in the middle of the including one (its handles would
            # fall inside the including service's group).
            self.included_service,
            tolerance,
        ])
        fix_include_declarations(self.device.gatt_server)

        def policy(characteristic):
            props = characteristic.properties
            return AccessPolicy(write_request=bool(props & P.WRITE),
                                write_command=bool(props & P.WRITE_WITHOUT_RESPONSE))

        self.device.gatt_server.policies = {
            c.handle: policy(c) for c in (
                self.hrm, self.body_sensor, self.manufacturer, self.serial, self.battery,
                self.long, self.indicate, self.encrypted, self.echo, self.control,
                self.stream, self.read_only, self.included_value, self.oversized,
                *([self.layout_marker] if extra else []))
        }

    # --- value callbacks --------------------------------------------------------------
    def _write_body_sensor(self, _connection, value: bytes) -> None:
        if len(value) != 1:
            raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)
        self.body_sensor_location = bytes(value)

    def _write_long(self, _connection, value: bytes) -> None:
        if len(value) > 512:
            raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)
        self.long_value = bytes(value)

    def _write_echo(self, connection, value: bytes) -> None:
        self.echo_value = bytes(value)
        self.notify(connection, self.echo, self.echo_value)

    # --- helpers ----------------------------------------------------------------------
    def cccd(self, connection, characteristic) -> int:
        subscribers = self.device.gatt_server.subscribers.get(connection) or {}
        value = subscribers.get(characteristic.handle)
        return value[0] if value else 0

    def notify(self, connection, characteristic, value: bytes) -> bool:
        '''Send a notification now (synchronously, in order) if the client subscribed.'''
        if not self.cccd(connection, characteristic) & 1:
            return False
        value = value[:connection.att_mtu - 3]
        self.device.send_l2cap_pdu(
            connection.handle, att.ATT_CID,
            struct.pack('<BH', 0x1B, characteristic.handle) + value)
        return True

    async def settle(self, connection) -> None:
        '''Wait until everything the peripheral host queued for this connection has
        left controller B (so that what follows is ordered after it).'''
        try:
            await self.device.host.le_acl_packet_queue.drain(connection.handle)
        except (ValueError, AttributeError):
            pass
        await asyncio.sleep(0)

    def spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        task.add_done_callback(self._task_done)
        return task

    @staticmethod
    def _task_done(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.error('peripheral task failed: %r', task.exception())

    # --- control point ----------------------------------------------------------------
    def _write_control(self, connection, value: bytes) -> None:
        if not value:
            raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
        command, params = value[0], bytes(value[1:])
        logger.info('control point: command 0x%02X params %s', command, params.hex())
        if command == 0x01:
            if len(params) != 6:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            count, length = struct.unpack('<IH', params)
            if not 4 <= length <= connection.att_mtu - 3:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            if not self.cccd(connection, self.stream) & 1:
                raise att.ATT_Error(CP_ERROR_NOT_SUBSCRIBED)
            task = self.flood_tasks.get(connection.handle)
            if task is not None and not task.done():
                raise att.ATT_Error(CP_ERROR_BUSY)
            self.flood_tasks[connection.handle] = self.spawn(
                self._flood(connection, count, length))
        elif command == 0x02:
            if len(params) != 1:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.spawn(self._disconnect(connection, params[0]))
        elif command == 0x03:
            if len(params) != 8:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.spawn(self._update_parameters(connection, *struct.unpack('<HHHH', params)))
        elif command == 0x04:
            if len(params) > connection.att_mtu - 3:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            if not self.cccd(connection, self.indicate) & 2:
                raise att.ATT_Error(CP_ERROR_NOT_SUBSCRIBED)
            self.indicate_value = params
            self.spawn(self._indicate(connection, self.indicate, params))
        elif command == 0x05:
            if len(params) != 1 or params[0] > 1:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self._heart_rate(connection, bool(params[0]))
        elif command == 0x06:
            if len(params) != 4:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            characteristic = self.device.gatt_service.service_changed_characteristic
            if not self.cccd(connection, characteristic) & 2:
                raise att.ATT_Error(CP_ERROR_NOT_SUBSCRIBED)
            self.spawn(self._indicate(connection, characteristic, params))
        elif command == 0x07:
            if params:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.spawn(self._unsolicited_heart_rate(connection))
        elif command == 0x08:
            # A misbehaving server: these bytes go out as an ATT PDU now, before the Write
            # Response, while the host's Write Request is still outstanding.
            if not params:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            logger.info('sending raw ATT %s before the Write Response', params.hex())
            self.device.send_l2cap_pdu(connection.handle, att.ATT_CID, bytes(params))
        elif command == 0x09:
            if not params:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.spawn(self._raw_att_after_response(connection, bytes(params)))
        elif command == 0x0C:
            # A peripheral that goes out of range: the link drops with this reason and
            # the peripheral is neither heard nor reachable again (this host session).
            if len(params) != 1:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            VANISHED.add(bytes(self.device.random_address.address_bytes))
            self.spawn(self._disconnect(connection, params[0]))
        elif command == 0x0A:
            # A server that goes silent: the host's next request is never answered.
            if params:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.device.gatt_server.muted.add(connection.handle)
        elif command == 0x0B:
            # The database changes while the client is away: a service is added when this
            # link ends (once per peer process).
            if params:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            if self.added_service is not None or self.change_on_disconnection:
                raise att.ATT_Error(CP_ERROR_BUSY)
            self.change_on_disconnection.add(connection.handle)
        elif command == 0x0D:
            # The peripheral opens an L2CAP channel to the host (Bumble's own request).
            if len(params) != 2:
                raise att.ATT_Error(CP_ERROR_INVALID_PARAMETERS)
            self.spawn(self._open_l2cap(connection, struct.unpack('<H', params)[0]))
        else:
            raise att.ATT_Error(CP_ERROR_UNKNOWN_COMMAND)

    async def _raw_att_after_response(self, connection, pdu: bytes) -> None:
        '''Control point 0x09: these bytes as an ATT PDU once the Write Response is out
        (no request outstanding then).'''
        await self.settle(connection)
        logger.info('sending raw ATT %s after the Write Response', pdu.hex())
        self.device.send_l2cap_pdu(connection.handle, att.ATT_CID, pdu)

    async def _unsolicited_heart_rate(self, connection) -> None:
        '''One Heart Rate Measurement notification whatever the CCCD says: what a bonded
        peer does on reconnection, its subscription having outlived the last link.'''
        await self.settle(connection)
        self.device.send_l2cap_pdu(
            connection.handle, att.ATT_CID,
            struct.pack('<BH', 0x1B, self.hrm.handle) + bytes([0x00, self.hr_bpm]))

    async def _open_l2cap(self, connection, psm: int) -> None:
        '''Opens an LE credit-based channel to the host's PSM, sends one SDU and echoes what
        comes back, as the echo server does; a refusal is logged by result.'''
        await self.settle(connection)
        try:
            channel = await connection.create_l2cap_channel(
                spec=l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=self.server.options.l2cap_mtu,
                                                    mps=self.server.options.l2cap_mps,
                                                    max_credits=self.server.options.l2cap_credits))
        except l2cap.L2capError as error:
            logger.info('%s: L2CAP channel to the host\'s PSM 0x%04X refused: 0x%04X %s',
                        self.label, psm, error.error_code, error.error_name)
            return
        logger.info('%s: L2CAP channel to the host\'s PSM 0x%04X open: CID 0x%04X <-> 0x%04X, MTU %d/%d, MPS %d/%d',
                    self.label, psm, channel.source_cid, channel.destination_cid, channel.mtu,
                    channel.peer_mtu, channel.mps, channel.peer_mps)
        channel.on('close', lambda: logger.info('%s: L2CAP channel 0x%04X closed', self.label, channel.source_cid))
        channel.sink = channel.write
        channel.write(b'hello from the peripheral')

    async def _disconnect(self, connection, reason: int) -> None:
        await self.settle(connection)
        logger.info('disconnecting 0x%04X with reason 0x%02X', connection.handle, reason)
        await self.device.send_command(hci.HCI_Disconnect_Command(
            connection_handle=connection.handle, reason=reason))

    async def _update_parameters(self, connection, interval_min, interval_max,
                                 latency, timeout) -> None:
        await self.settle(connection)
        manager = self.device.l2cap_channel_manager
        if manager.connection_parameters_update_response is not None:
            logger.warning('a connection parameter update request is already pending')
            return
        try:
            result = await asyncio.wait_for(manager.update_connection_parameters(
                connection, interval_min, interval_max, latency, timeout), HANG_GUARD)
            logger.info('connection parameter update request: result %d', result)
        except asyncio.TimeoutError:
            logger.warning('no answer to the connection parameter update request')
            manager.connection_parameters_update_response = None

    async def _indicate(self, connection, characteristic, value: bytes) -> None:
        await self.device.indicate_subscriber(connection, characteristic, value)

    def _heart_rate(self, connection, on: bool) -> None:
        task = self.hr_tasks.pop(connection.handle, None)
        if task is not None:
            task.cancel()
        if on:
            self.hr_tasks[connection.handle] = self.spawn(self._heart_rate_loop(connection))

    async def free_running_sensor(self, period: float, timestamps: bool, direct: bool = False) -> None:
        '''--sensor-period-ms: a sample every period, notified to whoever is subscribed then.
        Samples fall due by the clock; when the loop is late, the due ones go in a burst (at
        most 256 before it yields), so a short period keeps its rate. `direct`
        (--sensor-direct): a burst's notifications go straight to the host's socket
        (``direct_targets``), one write for the burst.'''
        loop = asyncio.get_running_loop()
        start = loop.time()
        taken = 0
        while True:
            due = int((loop.time() - start) / period)
            connections = list(self.device.connections.values())
            targets = self.direct_targets(connections) if direct else {}
            packets = {handle: [] for handle in targets}
            for _ in range(min(due - taken, 256)):
                taken += 1
                self.sample = self.sample % 0xFFFF + 1
                value = struct.pack('<BH', 0x01, self.sample)
                if timestamps:
                    value += struct.pack('<Q', time.monotonic_ns())
                for connection in connections:
                    target = targets.get(connection.handle)
                    if target is None:
                        self.notify(connection, self.hrm, value)
                    else:
                        pdu = struct.pack('<HHBH', 3 + len(value), att.ATT_CID, 0x1B, self.hrm.handle) + value
                        packets[connection.handle].append(struct.pack('<BHH', hci.HCI_ACL_DATA_PACKET, target[1] | 0x2000, len(pdu)) + pdu)
            for handle, burst in packets.items():
                if burst:
                    targets[handle][0].send_many_to_host(burst)
            await asyncio.sleep(max(0.0, start + (taken + 1) * period - loop.time()))

    def direct_targets(self, connections) -> dict:
        '''For --sensor-direct: by peripheral connection handle, (the host's session, the
        host-side ACL handle) of each connection subscribed to the measurement whose
        notification fits one ACL fragment; the others take ``notify``.'''
        targets = {}
        for connection in connections:
            if not self.cccd(connection, self.hrm) & 1:
                continue
            target = self.server.host_side_of(self.device, connection.handle)
            if target is None:
                continue
            controller_a, a_connection = target
            session = controller_a.session
            # 4 (L2CAP) + 3 (ATT) + 11 (count and timestamp) octets in one fragment.
            if session is None or not session.active or link_state(a_connection).rx_octets < 18:
                continue
            targets[connection.handle] = (session, a_connection.handle)
        return targets

    async def _heart_rate_loop(self, connection) -> None:
        while True:
            await asyncio.sleep(1.0)
            self.notify(connection, self.hrm, bytes([0x00, self.hr_bpm]))
            self.hr_bpm = 60 if self.hr_bpm >= 200 else self.hr_bpm + 1

    async def _flood(self, connection, count: int, length: int) -> None:
        await self.settle(connection)
        target = self.server.host_side_of(self.device, connection.handle)
        start = time.perf_counter()
        if target is None:
            # Not linked to controller A (should not happen): slow path.
            payload = bytearray(length)
            sent = 0
            for seq in range(count):
                struct.pack_into('<I', payload, 0, seq)
                if not self.notify(connection, self.stream, bytes(payload)):
                    break
                sent += 1
                if seq % 64 == 63:
                    await self.settle(connection)
        else:
            sent = await self.server.flood_to_host(
                target, self.stream.handle, count, length,
                lambda: self.cccd(connection, self.stream) & 1)
        elapsed = time.perf_counter() - start
        logger.info('flood of %d x %d B sent in %.3f s (%.0f notifications/s)%s',
                    sent, length, elapsed, sent / elapsed if elapsed > 0 else 0,
                    '' if sent == count else f' (stopped early: {sent} of {count})')

    # --- bonded clients: remembered CCCDs, Service Changed on reconnection --------------
    def _cccd_written(self, bearer, characteristic, value: bytes) -> None:
        connection = getattr(bearer, 'connection', bearer)
        key = self.bond_keys.get(getattr(connection, 'handle', None))
        if key is not None:
            self.bonded_cccds.setdefault(key, {})[characteristic.handle] = value

    async def _bond_of(self, connection) -> str | None:
        '''The bond of the central on `connection` (its keystore name), if it has one.'''
        if self.device.keystore is None:
            return None
        key = str(connection.peer_address)
        return key if await self.device.keystore.get(key) is not None else None

    async def _paired(self, connection) -> None:
        '''Bonded on this link: the CCCDs written so far are kept for the bond too.'''
        key = await self._bond_of(connection)
        if key is None or connection.handle in self.bond_keys:
            return
        self.bond_keys[connection.handle] = key
        written = self.device.gatt_server.subscribers.get(connection) or {}
        self.bonded_cccds[key] = dict(written)
        self.change_unaware.pop(key, None)  # a new bond starts change-aware

    async def _encrypted(self, connection) -> None:
        '''A bonded central encrypted a new link: its remembered CCCDs apply again, and a
        change made while it was away is indicated (Core 6.0 Vol 3 Part G 2.5.2).'''
        if not connection.is_encrypted or connection.handle in self.bond_keys:
            return
        key = await self._bond_of(connection)
        if key is None:
            return  # pairing's own encryption: `_paired` takes it from here
        self.bond_keys[connection.handle] = key
        remembered = self.bonded_cccds.get(key) or {}
        if remembered:
            cccds = self.device.gatt_server.subscribers.setdefault(connection, {})
            for handle, value in remembered.items():
                cccds.setdefault(handle, value)
            logger.info('%s: bonded %s: CCCDs restored %s', self.label, key,
                        ', '.join(f'0x{h:04X}={v.hex()}' for h, v in sorted(remembered.items())))
        changed = self.change_unaware.get(key)
        characteristic = self.device.gatt_service.service_changed_characteristic
        if changed is None or not self.cccd(connection, characteristic) & 2:
            return
        logger.info('%s: bonded %s reconnected after a change: Service Changed 0x%04X-0x%04X',
                    self.label, key, *changed)
        try:
            await self.device.indicate_subscriber(connection, characteristic, struct.pack('<HH', *changed))
        except Exception as error:  # the link went first: indicated on the next one
            logger.info('Service Changed to %s not confirmed: %r', key, error)
            return
        if self.change_unaware.get(key) == changed:
            del self.change_unaware[key]

    def _change_database(self, ended: int) -> None:
        '''Control point 0x0B, once its link ended: one more service at the end of the
        database; every bonded client becomes change-unaware of its range, and a connected
        client subscribed to Service Changed is told at once.'''
        P = gatt.Characteristic.Properties
        R = gatt.Characteristic.Permissions.READABLE
        value = self._char(custom_uuid(0x0301), P.READ, R, read=lambda _c: b'Bluejay added')
        service = gatt.Service(custom_uuid(0x0300), [value])
        self.device.gatt_server.add_service(service)
        self.device.gatt_server.policies[value.handle] = AccessPolicy(write_request=False, write_command=False)
        self.added_service = service
        changed = (service.handle, service.end_group_handle)
        logger.info('%s: database changed: service B1E70300 added at 0x%04X-0x%04X',
                    self.label, *changed)
        for key in set(self.bonded_cccds) | set(self.bond_keys.values()):
            old = self.change_unaware.get(key)
            self.change_unaware[key] = changed if old is None else (min(old[0], changed[0]), max(old[1], changed[1]))
        characteristic = self.device.gatt_service.service_changed_characteristic
        for connection in list(self.device.connections.values()):
            if connection.handle != ended and self.cccd(connection, characteristic) & 2:
                key = self.bond_keys.get(connection.handle)
                if key is not None:
                    self.change_unaware.pop(key, None)
                self.spawn(self._indicate(connection, characteristic, struct.pack('<HH', *changed)))

    # --- connection lifecycle ------------------------------------------------------------
    def _on_connection(self, connection) -> None:
        logger.info('%s: connected to %s (handle 0x%04X)',
                    self.label, connection.peer_address, connection.handle)
        handle = connection.handle
        connection.on('connection_encryption_change', lambda: self.spawn(self._encrypted(connection)))
        connection.on('pairing', lambda _keys: self.spawn(self._paired(connection)))

        def on_disconnection(reason):
            logger.info('%s: disconnected (handle 0x%04X, reason 0x%02X)',
                        self.label, handle, reason)
            for tasks in (self.hr_tasks, self.flood_tasks):
                task = tasks.pop(handle, None)
                if task is not None:
                    task.cancel()
            self.bond_keys.pop(handle, None)
            if handle in self.change_on_disconnection:
                self.change_on_disconnection.discard(handle)
                self._change_database(ended=handle)

        connection.on('disconnection', on_disconnection)


# -----------------------------------------------------------------------------
# L2CAP credit-based echo channels
# -----------------------------------------------------------------------------
L2CAP_ECHO_PSM = 0x0080            # echo, no security
L2CAP_ENCRYPTED_ECHO_PSM = 0x0081  # echo, refused with Insufficient Encryption until encrypted
L2CAP_DISCONNECT_MESSAGE = b'bluejay:disconnect'
L2CAP_SEND_MESSAGE = b'bluejay:send '  # + u32 LE count: the peer sends count octets


def serve_l2cap_echo(device: Device, label: str, spec: l2cap.LeCreditBasedChannelSpec) -> None:
    """Bumble's own LE credit-based servers (which also answer enhanced requests):
    PSM 0x0080 echoes every SDU back; 0x0081 is the same once the link is encrypted.
    Every K-frame the host sends without a credit, or longer than our MPS, is logged
    as a PROTOCOL-VIOLATION (stock Bumble only warns about the first and ignores the second)."""
    manager = device.l2cap_channel_manager

    def on_channel(channel) -> None:
        logger.info('%s: L2CAP channel open: PSM 0x%04X, CID 0x%04X <-> 0x%04X, MTU %d/%d, '
                    'MPS %d/%d, credits %d/%d', label, channel.psm, channel.source_cid,
                    channel.destination_cid, channel.mtu, channel.peer_mtu, channel.mps,
                    channel.peer_mps, channel.peer_credits, channel.credits)
        stock_on_pdu = channel.on_pdu

        def on_pdu(pdu: bytes) -> None:
            if channel.state == channel.State.CONNECTED:
                if channel.peer_credits == 0:
                    logger.error('PROTOCOL-VIOLATION: %s: K-frame on CID 0x%04X with no credit left',
                                 label, channel.source_cid)
                if len(pdu) > channel.mps:
                    logger.error('PROTOCOL-VIOLATION: %s: K-frame of %d octets on CID 0x%04X exceeds MPS %d',
                                 label, len(pdu), channel.source_cid, channel.mps)
            stock_on_pdu(pdu)
        channel.on_pdu = on_pdu

        def on_sdu(sdu: bytes) -> None:
            if sdu == L2CAP_DISCONNECT_MESSAGE:
                logger.info('%s: L2CAP channel 0x%04X: disconnecting as asked', label, channel.source_cid)
                asyncio.get_running_loop().create_task(channel.disconnect())
            elif sdu.startswith(L2CAP_SEND_MESSAGE) and len(sdu) == len(L2CAP_SEND_MESSAGE) + 4:
                count = struct.unpack_from('<I', sdu, len(L2CAP_SEND_MESSAGE))[0]
                data = bytes(i % 251 for i in range(min(count, 251 * 64)))
                while len(data) < count:
                    data += data[:count - len(data)]
                for offset in range(0, count, channel.peer_mtu):
                    channel.write(data[offset:offset + channel.peer_mtu])
            else:
                channel.write(sdu)
        channel.sink = on_sdu
        channel.on('close', lambda: logger.info('%s: L2CAP channel 0x%04X closed', label, channel.source_cid))

    device.create_l2cap_server(spec=spec, handler=on_channel)
    device.create_l2cap_server(
        spec=l2cap.LeCreditBasedChannelSpec(psm=L2CAP_ENCRYPTED_ECHO_PSM, mtu=spec.mtu, mps=spec.mps,
                                            max_credits=spec.max_credits),
        handler=on_channel)

    # Security on 0x0081: refused by result code until the link is encrypted, so a host
    # must secure the link (pair) and ask again, as for an ATT Insufficient Encryption.
    stock_le = manager.on_l2cap_le_credit_based_connection_request
    stock_enhanced = manager.on_l2cap_credit_based_connection_request

    def on_le_request(connection, cid, request) -> None:
        if request.le_psm == L2CAP_ENCRYPTED_ECHO_PSM and not connection.is_encrypted:
            logger.info('%s: L2CAP PSM 0x%04X refused: insufficient encryption', label, request.le_psm)
            manager.send_control_frame(connection, cid, l2cap.L2CAP_LE_Credit_Based_Connection_Response(
                identifier=request.identifier, destination_cid=0, mtu=spec.mtu, mps=spec.mps,
                initial_credits=0,
                result=l2cap.L2CAP_LE_Credit_Based_Connection_Response.Result.CONNECTION_REFUSED_INSUFFICIENT_ENCRYPTION))
            return
        stock_le(connection, cid, request)

    def on_enhanced_request(connection, cid, request) -> None:
        if request.spsm == L2CAP_ENCRYPTED_ECHO_PSM and not connection.is_encrypted:
            logger.info('%s: L2CAP PSM 0x%04X refused: insufficient encryption', label, request.spsm)
            manager.send_control_frame(connection, cid, l2cap.L2CAP_Credit_Based_Connection_Response(
                identifier=request.identifier, destination_cid=[0] * len(request.source_cid),
                mtu=spec.mtu, mps=spec.mps, initial_credits=0,
                result=l2cap.L2CAP_Credit_Based_Connection_Response.Result.ALL_CONNECTIONS_REFUSED_INSUFFICIENT_ENCRYPTION))
            return
        stock_enhanced(connection, cid, request)

    manager.on_l2cap_le_credit_based_connection_request = on_le_request
    manager.on_l2cap_credit_based_connection_request = on_enhanced_request


# -----------------------------------------------------------------------------
# LTK provider (bug 10)
# -----------------------------------------------------------------------------
def make_ltk_provider(device: Device):
    async def provide(connection_handle: int, rand: bytes, ediv: int):
        connection = device.lookup_connection(connection_handle)
        if connection is None:
            return None
        ltk = device.smp_manager.get_long_term_key(connection, rand, ediv)
        if ltk is not None:
            return ltk
        if device.keystore is None:
            return None
        keys = await device.keystore.get(str(connection.peer_address))
        if keys is None:
            bonded = [name for name, _ in await device.keystore.get_all()]
            logger.warning('LTK request from %s: no bond for this address (bonded: %s); '
                           'did the central distribute a different identity address?',
                           connection.peer_address, ', '.join(bonded) or 'none')
            return None
        if keys.ltk is not None:
            return keys.ltk.value
        # Legacy pairing: as the responder, the peripheral's OWN distributed LTK is
        # stored as ltk_central; stock returns ltk_peripheral (the central's).
        for key in (keys.ltk_central, keys.ltk_peripheral):
            if key is not None and key.value and (key.ediv or 0) == ediv and \
                    (key.rand or bytes(8)) == rand:
                return key.value
        logger.warning('LTK request from %s: no key matches EDIV %d / Rand %s',
                       connection.peer_address, ediv, rand.hex())
        return None
    return provide


class FixedPasskeyDelegate(pairing.PairingDelegate):
    def __init__(self, io_capability, passkey: int):
        super().__init__(io_capability=io_capability)
        self.passkey = passkey

    async def generate_passkey(self) -> int:
        return self.passkey

    async def get_number(self) -> int:
        return self.passkey

    async def display_number(self, number: int, digits: int) -> None:
        logger.info('PASSKEY %0*d', digits, number)


# -----------------------------------------------------------------------------
# Host sessions and the server
# -----------------------------------------------------------------------------
class HostSession(asyncio.Protocol):
    def __init__(self, server: 'PeerServer'):
        self.server = server
        self.transport = None
        self.controller: HostFacingController | None = None
        self.parser = PacketParser(self)
        self.active = False
        self.can_write = asyncio.Event()
        self.can_write.set()

    # asyncio.Protocol ----------------------------------------------------------------
    # How long a new host connection waits for the previous host's session to end before
    # it is refused: a host that closed its socket right after sending may still have
    # bytes the peer has not read, so its EOF is not visible yet (a loaded machine).
    TAKEOVER_GRACE = 1.0

    def connection_made(self, transport) -> None:
        self.transport = transport
        if not self.server.accept_session(self):
            transport.pause_reading()
            asyncio.get_running_loop().create_task(self._wait_for_turn())
            return
        self._begin()

    async def _wait_for_turn(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.TAKEOVER_GRACE
        while loop.time() < deadline:
            await asyncio.sleep(0.02)
            if self.transport.is_closing():
                return
            if self.server.accept_session(self):
                self.transport.resume_reading()
                self._begin()
                return
        logger.warning('a host is already connected: closing the new connection')
        self.transport.close()

    def _begin(self) -> None:
        transport = self.transport
        self.active = True
        sock = transport.get_extra_info('socket')
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        self.controller = self.server.new_host_facing_controller(self)
        logger.info('host connected (%s)', transport.get_extra_info('peername') or 'unix')

    def data_received(self, data: bytes) -> None:
        if not self.active:
            return
        try:
            self.parser.feed_data(data)
        except InvalidPacketError as error:
            logger.error('PROTOCOL-VIOLATION: bad H4 data from host (%s)', error)

    def eof_received(self):
        return False  # close

    def connection_lost(self, exc) -> None:
        if self.active:
            logger.info('host disconnected')
            self.close(reason=0x13)

    def pause_writing(self) -> None:
        self.can_write.clear()

    def resume_writing(self) -> None:
        self.can_write.set()

    # Packets from the host -------------------------------------------------------------
    def on_packet(self, packet: bytes) -> None:
        snoop = self.server.snoop
        if snoop is not None:
            snoop.record(packet, controller_to_host=False)
        if packet[0] == hci.HCI_COMMAND_PACKET and len(packet) >= 3:
            opcode = struct.unpack_from('<H', packet, 1)[0]
            if opcode in self.server.muted:
                logger.info('muted command 0x%04X: no answer', opcode)
                return
            if opcode == hci.HCI_RESET_COMMAND:
                # bug 2: stock HCI Reset is a no-op; use a fresh controller instead.
                old = self.controller
                if old is not None:
                    old.teardown(0x13)
                self.server.cancel_floods()
                self.controller = self.server.new_host_facing_controller(self)
        if self.controller is not None:
            self.controller.on_packet(packet)

    # Packets to the host -------------------------------------------------------------
    def send_to_host(self, data: bytes) -> None:
        if not self.active:
            return
        snoop = self.server.snoop
        if snoop is not None:
            snoop.record(data, controller_to_host=True)
        self.transport.write(data)

    def send_many_to_host(self, packets: list) -> None:
        if not self.active:
            return
        snoop = self.server.snoop
        if snoop is not None:
            for data in packets:
                snoop.record(data, controller_to_host=True)
        self.transport.write(b''.join(packets))

    def close(self, reason: int = 0x13) -> None:
        if not self.active:
            return
        self.active = False
        if self.controller is not None:
            self.controller.teardown(reason)
            self.controller = None
        self.server.session_closed(self)
        if self.transport is not None:
            self.transport.close()
        self.can_write.set()

    def is_alive(self) -> bool:
        '''False if the host already closed its end (EOF not processed yet).'''
        sock = self.transport.get_extra_info('socket') if self.transport else None
        if sock is None:
            return False
        try:
            dup = socket.socket(fileno=os.dup(sock.fileno()))
        except OSError:
            return False
        try:
            dup.setblocking(False)
            data = dup.recv(1, socket.MSG_PEEK)
            return len(data) > 0
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            dup.close()


class HostPort:
    '''--hosts N: host-facing controller k > 0, served on a TCP port of its own, on the same
    link as the peripherals and the first host. It has its own session slot and public
    address, and hears the peripherals at its own RSSI; the rest is the server's.'''

    def __init__(self, server: 'PeerServer', index: int):
        self.server = server
        self.index = index
        self.session: HostSession | None = None
        self.listener = None

    def __getattr__(self, name):
        return getattr(self.server, name)

    def accept_session(self, session: HostSession) -> bool:
        current = self.session
        if current is not None:
            if current.is_alive():
                return False
            current.close(reason=0x13)
        self.session = session
        return True

    def session_closed(self, session: HostSession) -> None:
        if self.session is session:
            self.session = None

    def new_host_facing_controller(self, session: HostSession) -> HostFacingController:
        return self.server.host_facing_controller(session, self.index)

    async def listen(self) -> str:
        self.listener = await self.server.loop.create_server(
            lambda: HostSession(self), '127.0.0.1', 0, reuse_address=True)
        return f'tcp:127.0.0.1:{self.listener.sockets[0].getsockname()[1]}'

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
        if self.session is not None:
            self.session.close(reason=0x13)


class PeerServer:
    def __init__(self, options):
        self.options = options
        self.loop = asyncio.get_running_loop()
        self.link = PeerLink()
        self.port = options.port
        self.session: HostSession | None = None
        self.snoop = BtSnoopWriter(options.snoop, options.snoop_flush) if options.snoop else None
        self.muted = set(options.mute_opcode)
        self.server = None
        self.devices: list[Device] = []
        self.apps: list[PeripheralApp] = []
        self.flood_tasks: set[asyncio.Task] = set()
        self.ports = [HostPort(self, index) for index in range(1, options.hosts)]

    # Peripheral --------------------------------------------------------------------------
    async def start_peripherals(self) -> None:
        for index in range(self.options.peripherals):
            await self.start_peripheral(index)
        if self.options.sensor_period_ms > 0:
            for app in self.apps:
                app.spawn(app.free_running_sensor(self.options.sensor_period_ms / 1000.0,
                                                  self.options.sensor_timestamps,
                                                  self.options.sensor_direct and self.options.hosts == 1))

    async def start_peripheral(self, index: int) -> None:
        '''Peripheral `index` (0-based): its own controller on the link and Device.'''
        options = self.options
        name = peripheral_name(options.name, index)
        controller_b = PeerController(
            'B' if index == 0 else f'B{index + 1}', link=self.link,
            public_address=peripheral_address(PERIPHERAL_PUBLIC_ADDRESS, index))
        config = DeviceConfiguration()
        config.name = name
        config.address = hci.Address(peripheral_address(options.address, index),
                                     hci.Address.RANDOM_DEVICE_ADDRESS)
        config.advertising_interval_min = ADVERTISING_INTERVAL_MS
        config.advertising_interval_max = ADVERTISING_INTERVAL_MS
        config.advertising_data = build_advertising_data()
        config.scan_response_data = build_scan_response_data(name, complete_name_first=index > 0)
        config.identity_address_type = hci.Address.RANDOM_DEVICE_ADDRESS  # bug 9
        if options.irk is not None:
            config.irk = options.irk
        config.io_capability = {
            'none': pairing.PairingDelegate.NO_OUTPUT_NO_INPUT,
            'display': pairing.PairingDelegate.DISPLAY_OUTPUT_ONLY,
            'display-yes-no': pairing.PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
            'keyboard': pairing.PairingDelegate.KEYBOARD_INPUT_ONLY,
            'keyboard-display': pairing.PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
        }[options.io_capability]
        host = PeerHost(controller_source=controller_b, controller_sink=controller_b)
        device = Device(config=config, host=host)
        device.gatt_server.__class__ = PeerGattServer  # bug 11 (explicit checks)
        device.gatt_server.policies = {}
        device.gatt_server.muted = set()
        device.gatt_server.max_mtu = options.att_mtu
        io_capability = config.io_capability
        device.pairing_config_factory = lambda _connection: pairing.PairingConfig(
            sc=not options.no_sc, mitm=True, bonding=True,
            identity_address_type=pairing.PairingConfig.AddressType.RANDOM,
            delegate=FixedPasskeyDelegate(io_capability, options.passkey))
        self.devices.append(device)
        self.apps.append(PeripheralApp(
            self, device, name, 'peripheral' if index == 0 else f'peripheral {index + 1}',
            heart_rate_on_subscribe=options.heart_rate_on_subscribe))
        serve_l2cap_echo(device, 'peripheral' if index == 0 else f'peripheral {index + 1}',
                         l2cap.LeCreditBasedChannelSpec(psm=L2CAP_ECHO_PSM, mtu=options.l2cap_mtu,
                                                        mps=options.l2cap_mps,
                                                        max_credits=options.l2cap_credits))
        await device.power_on()
        host.long_term_key_provider = make_ltk_provider(device)  # bug 10
        await device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            own_address_type=hci.OwnAddressType.RANDOM,
            auto_restart=True)

    # Host side --------------------------------------------------------------------------
    def accept_session(self, session: HostSession) -> bool:
        current = self.session
        if current is not None:
            if current.is_alive():
                return False
            logger.info('previous host is gone (EOF pending): replacing it')
            current.close(reason=0x13)
        self.session = session
        VANISHED.clear()
        if not self.ports:
            for app in self.apps:
                app.reset_values()
        return True

    def session_closed(self, session: HostSession) -> None:
        if self.session is session:
            self.session = None
        self.cancel_floods()
        if not self.ports:
            for app in self.apps:
                app.reset_values()

    def new_host_facing_controller(self, session: HostSession) -> HostFacingController:
        return self.host_facing_controller(session, 0)

    def host_facing_controller(self, session: HostSession, index: int) -> HostFacingController:
        '''Host `index`'s controller A (0: the first host, at HOST_FACING_PUBLIC_ADDRESS).'''
        address = HOST_FACING_PUBLIC_ADDRESS if index == 0 else peripheral_address('B1:E7:00:00:01:0A', index)
        controller = HostFacingController(session, self.options, link=self.link, public_address=address)
        hosts = self.options.hosts
        if hosts > 1:
            controller.rssi_by_address = {
                address_bytes(hci.Address(peripheral_address(self.options.address, p), hci.Address.RANDOM_DEVICE_ADDRESS)):
                    -40 - 10 * ((p - index) % hosts)
                for p in range(self.options.peripherals)}
        return controller

    def host_side_of(self, device: Device, peripheral_handle: int):
        '''(controller A, A's connection) linked to this peripheral's connection.'''
        session = self.session
        if session is None or session.controller is None:
            return None
        controller_b = device.host.hci_sink
        b_connection = (controller_b.find_le_connection_by_handle(peripheral_handle)
                        if controller_b is not None else None)
        if b_connection is None:
            return None
        controller_a = session.controller
        a_connection = controller_a.le_connections.get(b_connection.self_address)
        if a_connection is None:
            return None
        return controller_a, a_connection

    async def flood_to_host(self, target, att_handle: int, count: int, length: int,
                            still_subscribed) -> int:
        '''Fast path: pre-built notification PDUs written straight to the host socket
        through controller A (fragmented, snooped), bypassing the peripheral's stack.'''
        controller_a, a_connection = target
        task = asyncio.current_task()
        self.flood_tasks.add(task)
        try:
            pdu = bytearray(4 + 3 + length)
            struct.pack_into('<HHBH', pdu, 0, 3 + length, att.ATT_CID, 0x1B, att_handle)
            handle = a_connection.handle
            fragments = None
            fragment_size = None
            seq = 0
            batch = 256
            while seq < count:
                session = controller_a.session
                if (session is None or not session.active
                        or controller_a.le_connections.get(a_connection.peer_address)
                        is not a_connection or not still_subscribed()):
                    logger.warning('flood stopped after %d of %d notifications', seq, count)
                    return seq
                if not session.can_write.is_set():
                    await session.can_write.wait()
                    continue
                size = link_state(a_connection).rx_octets
                if size != fragment_size:
                    fragment_size = size
                    fragments = []
                    for offset in range(0, len(pdu), size):
                        end = min(offset + size, len(pdu))
                        pb = 0x2000 if offset == 0 else 0x1000
                        fragments.append((struct.pack('<BHH', hci.HCI_ACL_DATA_PACKET,
                                                      handle | pb, end - offset),
                                          offset, end))
                out = []
                for _ in range(min(batch, count - seq)):
                    struct.pack_into('<I', pdu, 7, seq)
                    data = bytes(pdu)
                    for header, start, end in fragments:
                        out.append(header + data[start:end])
                    seq += 1
                session.send_many_to_host(out)
                await asyncio.sleep(0)
            return seq
        except asyncio.CancelledError:
            logger.warning('flood stopped after %d of %d notifications (cancelled)',
                           seq, count)
            raise
        finally:
            self.flood_tasks.discard(task)

    def cancel_floods(self) -> None:
        for task in list(self.flood_tasks):
            task.cancel()

    async def listen(self) -> str:
        options = self.options
        if options.unix:
            path = options.unix
            try:
                if stat.S_ISSOCK(os.stat(path).st_mode):
                    os.unlink(path)
            except FileNotFoundError:
                pass
            self.server = await self.loop.create_unix_server(
                lambda: HostSession(self), path)
            return f'unix:{path}'
        self.server = await self.loop.create_server(
            lambda: HostSession(self), '127.0.0.1', self.port, reuse_address=True)
        port = self.server.sockets[0].getsockname()[1]
        more = [await host_port.listen() for host_port in self.ports]
        return ' '.join([f'tcp:127.0.0.1:{port}'] + [f'transport{index + 2}={text}' for index, text in enumerate(more)])

    def close(self) -> None:
        for host_port in self.ports:
            host_port.close()
        if self.server is not None:
            self.server.close()
        if self.session is not None:
            self.session.close(reason=0x13)
        if self.snoop is not None:
            self.snoop.close()
        if self.options.unix:
            try:
                os.unlink(self.options.unix)
            except OSError:
                pass


# -----------------------------------------------------------------------------
# Main
# -----------------------------------------------------------------------------
def setup_logging(verbosity: int, log_file: str | None) -> None:
    global DEBUG_HCI
    handler = (logging.FileHandler(log_file) if log_file
               else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter(
        '%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s', '%H:%M:%S'))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING if verbosity < 2 else logging.DEBUG)
    logger.setLevel(logging.INFO if verbosity == 0 else logging.DEBUG)
    logging.getLogger('bumble').setLevel(
        logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG)
    DEBUG_HCI = verbosity >= 2


async def run(options) -> int:
    loop = asyncio.get_running_loop()
    stop = loop.create_future()

    def request_stop(why: str) -> None:
        if not stop.done():
            logger.info('stopping: %s', why)
            stop.set_result(why)

    loop.add_signal_handler(signal.SIGTERM, request_stop, 'SIGTERM')
    loop.add_signal_handler(signal.SIGINT, request_stop, 'SIGINT')

    # Never outlive the parent (poll: PR_SET_PDEATHSIG would fire when the spawning
    # THREAD exits, which is wrong for multi-threaded test runners).
    parent = PARENT_PID
    if parent == 1:
        logger.warning('started without a parent process (ppid 1): parent-death detection '
                       'cannot work; stop the peer with SIGTERM or use --exit-on-stdin-eof')

    async def watch_parent():
        while True:
            await asyncio.sleep(0.5)
            if os.getppid() != parent:
                request_stop('parent process died')
                return

    watcher = loop.create_task(watch_parent())

    if options.exit_on_stdin_eof:
        stdin_fd = sys.stdin.fileno()

        def on_stdin():
            try:
                data = os.read(stdin_fd, 4096)
            except OSError:
                data = b''
            if not data:
                loop.remove_reader(stdin_fd)
                request_stop('stdin EOF')

        loop.add_reader(stdin_fd, on_stdin)

    # Only the READY line goes to stdout: anything else printed goes to stderr.
    ready_out, sys.stdout = sys.stdout, sys.stderr
    server = PeerServer(options)
    try:
        if options.two_hosts:
            # listen() names every host's transport: transport=… transport2=…
            transport = await server.listen()
            ready_out.write(f'READY transport={transport} name=two hosts\n')
            ready_out.flush()
            why = await stop
            return 0
        if options.central:
            import central
            drivers = [await central.start_central(server.link, PeerController, PeerHost,
                                                   peripheral_address(options.address, index),
                                                   peripheral_address(PERIPHERAL_PUBLIC_ADDRESS, index), index)
                       for index in range(options.centrals)]
            transport = await server.listen()
            more = ''.join(f'address{index + 1}={peripheral_address(options.address, index).upper()} '
                           for index in range(1, options.centrals))
            ready_out.write(f'READY transport={transport} address={options.address.upper()} '
                            f'address_type=random {more}name=Bumble central\n')
            ready_out.flush()
            commands = loop.create_task(central.serve(drivers, ready_out, lambda: request_stop('stdin EOF')))
            why = await stop
            commands.cancel()
            return 0
        await server.start_peripherals()
        broadcasters = None
        if options.advertisers:
            broadcasters = Broadcasters(server.link, options.advertisers, options.advertiser_kinds,
                                        options.advertiser_address, options.advertiser_period_ms / 1000,
                                        options.advertiser_interval_ms / 1000)
            BROADCASTING.update(broadcasters.address_keys)
            broadcasters.start()
        if options.phone_irk:
            phones = Phones(server.link, options.phone_irk, options.rotate_every, BROADCASTING)
            phones.start()
            loop.add_signal_handler(signal.SIGUSR1, phones.silence_next)
        transport = await server.listen()
        # name= stays last (it runs to the end of the line); the other peripherals'
        # addresses go before it, and only when there are any.
        more = ''.join(f'address{index + 1}={peripheral_address(options.address, index)} '
                       for index in range(1, options.peripherals))
        if broadcasters is not None:
            more += f'advertiser={broadcasters.addresses[0]} advertisers={options.advertisers} '
        ready_out.write(
            f'READY transport={transport} address={options.address.upper()} '
            f'address_type=random {more}name={options.name}\n')
        ready_out.flush()
        why = await stop
    finally:
        watcher.cancel()
        server.close()
    logger.info('exit (%s)', why)
    return 0


def send_invalid_public_key(self) -> None:
    '''--invalid-public-key: our X with Y changed by one bit, a point off the P-256 curve,
    as an invalid-curve attacker (CVE-2018-5383) would send.'''
    y = bytearray(self.ecc_key.y[::-1])
    y[0] ^= 0x01
    logger.info('sending an invalid public key (off the curve)')
    self.send_command(smp.SMP_Pairing_Public_Key_Command(
        public_key_x=self.ecc_key.x[::-1], public_key_y=bytes(y)))


def main() -> None:
    options = args
    # A parent may start us with signals blocked (Swift Foundation's Process passes on the
    # spawning thread's mask, where SIGTERM is blocked); then SIGTERM would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1})
    setup_logging(options.verbose, options.log)
    if options.invalid_public_key:
        smp.Session.send_public_key_command = send_invalid_public_key
    address = hci.Address(options.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    if address.address_bytes[5] & 0xC0 != 0xC0:
        logger.warning('%s is not a static random address (top bits must be 11)',
                       options.address)
    try:
        code = asyncio.run(run(options))
    except Exception:
        logger.exception('fatal error')
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == '__main__':
    main()
