#!/usr/bin/env python3
"""Bumble's HOST receive path for ATT notifications, fed from a file of raw H4 bytes.

    bumble_receive.py STREAM_FILE [--runs K] [--json]
    bumble_receive.py --make-stream FILE --count N --payload P

Counterpart of the Swift stack's receive benchmark: both are fed the same bytes.

The stream (no btsnoop header) is one H4 LE Connection Complete event (handle 0x0040,
central, peer F0:0D:B1:E7:00:01 random), then N H4 ACL packets on handle 0x0040
(PB 0b10, first flushable), each a complete L2CAP basic frame on CID 0x0004 holding an
ATT Handle Value Notification (0x1B) for handle 0x002B with a P-byte value:
a little-endian u32 sequence number 0, 1, 2, ..., then P-4 zero bytes. make_stream()
below is the reference for the exact layout.

What is measured, per run, with a fresh Host + Device each time: the time from the first
ACL byte fed until the subscriber has seen all N notifications. The bytes go in 64 KiB
chunks, cut regardless of packet boundaries, through Bumble's H4 PacketParser into
Host.on_packet, as a transport would hand them over. The event loop gets a turn after
each chunk. The path is stock Bumble: HCI packet parsing, ACL reassembly, L2CAP,
Device.on_gatt_pdu with the ATT PDU parse, and the GATT client's notification dispatch
(including its value cache). Our subscriber decodes int.from_bytes(value[0:4], 'little'),
and the run fails loudly unless all N arrive, in order.

What is skipped or stubbed:
  * The controller. Device.power_on() runs its stock HCI initialisation against a Bumble
    emulated Controller. The host's sink is then replaced by a sink that swallows (and
    counts) whatever the host sends, so no controller code runs during the measurement.
    The connection event and all ACL data come from the file.
  * The LE Create Connection procedure. We set device.connect_own_address_type, as
    Device.connect() does before it sends the command, so that the injected
    central-role LE Connection Complete is accepted.
  * The CCCD write and discovery. GattClient.subscribe() would discover descriptors
    and write the CCCD. We add the callback to gatt_client.notification_subscribers
    for handle 0x002B, which is the set that subscribe() fills. There is no GATT server
    on the other side.
  * Bumble's eager debug formatting (bug 13 in Fixtures/peer/peer.py and in the notes):
    Host.on_hci_packet and Host.send_hci_packet build a coloured debug string for every
    packet, even with logging off. That costs about 40% CPU. As in the peer, FastHost
    overrides both with copies that drop only that logger.debug line, so the measurement
    stays fair to Bumble. gatt_client.Client.on_gatt_pdu does the same for every ATT PDU
    (half of Bumble's time in a profile); for notifications it is replaced by a copy of
    its dispatch minus that line. Other debug f-strings are left as shipped.
"""
import argparse
import asyncio
import gc
import json
import logging
import statistics
import struct
import sys
import time

from bumble import att, gatt_client, hci
from bumble.controller import Controller
from bumble.device import Device
from bumble.host import Host
from bumble.snoop import Snooper
from bumble.transport.common import PacketParser

HANDLE = 0x0040
ATT_CID = 0x0004
ATT_HANDLE = 0x002B
PEER_ADDRESS = bytes.fromhex('0100E7B10DF0')  # F0:0D:B1:E7:00:01, wire order
CHUNK = 65536


def make_stream(path: str, count: int, payload: int) -> None:
    """The stream format, byte for byte (all multi-byte fields little-endian)."""
    assert payload >= 4
    event = bytes([0x04, 0x3E, 19,            # H4 event, LE Meta, parameter length
                   0x01, 0x00])               # LE Connection Complete, status success
    event += struct.pack('<HBB', HANDLE, 0x00, 0x01)  # handle, role central, peer random
    event += PEER_ADDRESS
    event += struct.pack('<HHHB', 0x0018, 0, 0x01F4, 0)  # interval, latency, timeout, SCA
    header = struct.pack('<BHHHHBH',
                         0x02,                # H4 ACL
                         HANDLE | 0b10 << 12,  # handle + PB 0b10 (first, flushable), BC 0
                         4 + 3 + payload,     # ACL data length
                         3 + payload,         # L2CAP length
                         ATT_CID,             # L2CAP CID
                         0x1B,                # ATT Handle Value Notification
                         ATT_HANDLE)
    filler = bytes(payload - 4)
    with open(path, 'wb') as out:
        out.write(event)
        for seq in range(count):
            out.write(header + struct.pack('<I', seq) + filler)


def _on_gatt_pdu_without_debug(self, att_pdu) -> None:
    """gatt_client.Client.on_gatt_pdu for non-responses, minus its eager debug f-string."""
    if att_pdu.op_code in att.ATT_RESPONSES:
        return _stock_on_gatt_pdu(self, att_pdu)
    handler = getattr(self, f'on_{att_pdu.name.lower()}', None)
    if handler is None:
        return _stock_on_gatt_pdu(self, att_pdu)
    handler(att_pdu)


_stock_on_gatt_pdu = gatt_client.Client.on_gatt_pdu
gatt_client.Client.on_gatt_pdu = _on_gatt_pdu_without_debug


class FastHost(Host):
    """Host minus the eager debug formatting (bug 13), otherwise identical."""

    def send_hci_packet(self, packet) -> None:
        if self.snooper:
            self.snooper.snoop(bytes(packet), Snooper.Direction.HOST_TO_CONTROLLER)
        if self.hci_sink:
            self.hci_sink.on_packet(bytes(packet))

    def on_hci_packet(self, packet) -> None:
        if self.snooper:
            self.snooper.snoop(bytes(packet), Snooper.Direction.CONTROLLER_TO_HOST)
        match packet:
            case hci.HCI_Command():
                self.on_hci_command_packet(packet)
            case hci.HCI_Event():
                self.on_hci_event_packet(packet)
            case hci.HCI_AclDataPacket():
                self.on_hci_acl_data_packet(packet)
            case hci.HCI_SynchronousDataPacket():
                self.on_hci_sco_data_packet(packet)
            case hci.HCI_IsoDataPacket():
                self.on_hci_iso_data_packet(packet)


class SwallowSink:
    """Stands in for the controller once the stack is up: takes what the host sends."""

    def __init__(self) -> None:
        self.packets = 0

    def on_packet(self, packet: bytes) -> None:
        self.packets += 1


def split_stream(data: bytes) -> tuple[bytes, bytes, int]:
    """(connection event, ACL bytes, expected notification count), checking the layout."""
    if data[0:2] != b'\x04\x3e' or data[3] != 0x01:
        sys.exit('stream does not start with an H4 LE Connection Complete event')
    event, acl = data[:3 + data[2]], data[3 + data[2]:]
    if not acl or acl[0] != 0x02:
        sys.exit('no H4 ACL packet after the connection event')
    packet_size = 5 + struct.unpack_from('<H', acl, 3)[0]
    if len(acl) % packet_size:
        sys.exit(f'ACL bytes ({len(acl)}) are not a whole number of {packet_size}-byte packets')
    return event, acl, len(acl) // packet_size


async def one_run(event: bytes, acl: bytes, count: int) -> float:
    """One fresh stack; returns notifications/s."""
    controller = Controller('C')
    host = FastHost(controller_source=controller, controller_sink=controller)
    device = Device(host=host)
    await device.power_on()
    controller.host = None  # unplug the emulated controller
    sink = SwallowSink()
    host.set_packet_sink(sink)
    device.connect_own_address_type = hci.OwnAddressType.RANDOM  # as Device.connect() does

    parser = PacketParser(sink=host)
    parser.feed_data(event)
    await asyncio.sleep(0)
    connection = device.connections.get(HANDLE)
    if connection is None:
        raise RuntimeError('Bumble did not create a connection for handle 0x0040')

    loop = asyncio.get_running_loop()
    done = loop.create_future()
    state = {'next': 0}

    def on_notification(value: bytes) -> None:
        seq = int.from_bytes(value[0:4], 'little')
        if seq != state['next'] and not done.done():
            done.set_exception(SystemExit(
                f'FAIL: notification {seq} arrived, expected {state["next"]}'))
        state['next'] = seq + 1
        if seq + 1 == count and not done.done():
            done.set_result(None)

    connection.gatt_client.notification_subscribers.setdefault(ATT_HANDLE, set()).add(
        on_notification)

    chunks = [acl[i:i + CHUNK] for i in range(0, len(acl), CHUNK)]
    gc.collect()
    start = time.perf_counter()
    for chunk in chunks:
        parser.feed_data(chunk)
        await asyncio.sleep(0)
    try:
        await asyncio.wait_for(done, timeout=5)
    except TimeoutError:
        raise SystemExit(f'FAIL: only {state["next"]} of {count} notifications arrived')
    elapsed = time.perf_counter() - start
    if sink.packets:
        logging.info('host sent %d packets to the swallowing sink', sink.packets)
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('stream', nargs='?', help='raw H4 stream to feed')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--json', action='store_true', help='print one JSON object')
    parser.add_argument('--make-stream', metavar='FILE', help='write a stream and exit')
    parser.add_argument('--count', type=int, default=200000)
    parser.add_argument('--payload', type=int, default=244, help='ATT value bytes (>= 4)')
    options = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    if options.make_stream:
        make_stream(options.make_stream, options.count, options.payload)
        return
    if not options.stream:
        parser.error('STREAM_FILE or --make-stream is required')

    with open(options.stream, 'rb') as file:
        event, acl, count = split_stream(file.read())
    payload = struct.unpack_from('<H', acl, 5)[0] - 3
    runs = [asyncio.run(one_run(event, acl, count)) for _ in range(options.runs)]
    result = {'notifications': count, 'payload': payload, 'runs': [round(r) for r in runs],
              'median': round(statistics.median(runs)), 'min': round(min(runs)),
              'max': round(max(runs))}
    if options.json:
        print(json.dumps(result))
    else:
        print(f'Bumble host receive, {count} notifications of {payload} B, '
              f'{len(runs)} runs: median {result["median"]}/s '
              f'(min {result["min"]}, max {result["max"]})')


if __name__ == '__main__':
    main()
