#!/usr/bin/env python3
"""Writes the small btsnoop captures of dynamic L2CAP channels in this directory.

Each capture is built packet by packet from the Bluetooth Core Specification 6.0 (Vol 4
Part E for HCI, Vol 3 Part A for L2CAP, Vol 3 Part F for ATT), never copied from a
recording, so every octet is known and the expected counts in
Tests/TraceDecodingTests/DynamicChannelTests.swift can be worked out by hand. Each one was
also read with tshark (Wireshark 4.0) and the tests note what it reported.

Run it from anywhere: python3 Fixtures/traces/l2cap/make-fixtures.py
It rewrites the .btsnoop files next to it; `git diff --stat` shows whether anything changed.

Directions are the host's: "tx" is host to controller (sent to the peer), "rx" is
controller to host (received from the peer).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# btsnoop counts microseconds from year 0; this constant is what every tool uses for 1970.
EPOCH_OFFSET = 0x00DCDDB30F2F8000
# 2024-01-01 00:00:00 UTC, so the captures print a plain date.
START = EPOCH_OFFSET + 1_704_067_200_000_000

PEER = bytes([0x66, 0x55, 0x44, 0x33, 0x22, 0x11])  # 11:22:33:44:55:66, little-endian
LE_PEER = bytes([0x01, 0x00, 0xE7, 0xB1, 0x0D, 0xF0])  # F0:0D:B1:E7:00:01


def u16(value):
    return struct.pack('<H', value)


def u32(value):
    return struct.pack('<I', value)


class Capture:
    """Records of one btsnoop file (datalink 1002, H4)."""

    def __init__(self):
        self.records = []

    def _add(self, flags, data):
        self.records.append((flags, START + len(self.records) * 1000, data))

    def command(self, opcode, parameters=b''):
        self._add(2, bytes([0x01]) + u16(opcode) + bytes([len(parameters)]) + parameters)

    def event(self, code, parameters):
        self._add(3, bytes([0x04, code, len(parameters)]) + parameters)

    def acl(self, handle, data, rx, start=True):
        """One ACL packet: packet boundary 0b10 (first, automatically flushable) or 0b01."""
        flags = 0b10 if start else 0b01
        header = u16(handle | flags << 12) + u16(len(data))
        self._add(1 if rx else 0, bytes([0x02]) + header + data)

    def l2cap(self, handle, cid, payload, rx, fragment=None):
        """A whole L2CAP PDU (basic header, then payload), split into ACL packets of at
        most `fragment` octets when given."""
        pdu = u16(len(payload)) + u16(cid) + payload
        size = fragment or len(pdu)
        for offset in range(0, len(pdu), size):
            self.acl(handle, pdu[offset:offset + size], rx, start=offset == 0)

    def signaling(self, handle, commands, rx, cid=0x0001):
        """One C-frame holding `commands` (BR/EDR signaling allows several, LE one)."""
        self.l2cap(handle, cid, b''.join(commands), rx)

    def write(self, name):
        out = b'btsnoop\0' + struct.pack('>II', 1, 1002)
        for flags, timestamp, data in self.records:
            out += struct.pack('>IIIIq', len(data), len(data), flags, 0, timestamp) + data
        with open(os.path.join(HERE, name), 'wb') as file:
            file.write(out)


# --- HCI ---------------------------------------------------------------------------

def connection_complete(capture, handle, peer=PEER, link_type=0x01):
    """HCI_Connection_Complete (0x03): status, handle, BD_ADDR, link type (0x01 ACL),
    encryption enabled."""
    capture.event(0x03, bytes([0x00]) + u16(handle) + peer + bytes([link_type, 0x00]))


def le_connection_complete(capture, handle, role=0x00):
    """HCI_LE_Connection_Complete (LE Meta 0x01): status, handle, role, peer address type
    (random), address, interval 30 ms, latency 0, timeout 4 s, clock accuracy."""
    capture.event(0x3E, bytes([0x01, 0x00]) + u16(handle) + bytes([role, 0x01]) + LE_PEER
                  + u16(24) + u16(0) + u16(400) + bytes([0x00]))


def disconnection_complete(capture, handle, reason=0x13):
    capture.event(0x05, bytes([0x00]) + u16(handle) + bytes([reason]))


# --- L2CAP signaling (Core Vol 3 Part A, 4) ------------------------------------------

def command(code, identifier, data):
    return bytes([code, identifier]) + u16(len(data)) + data


def connection_req(identifier, psm, scid):
    return command(0x02, identifier, u16(psm) + u16(scid))


def connection_rsp(identifier, dcid, scid, result, status=0):
    return command(0x03, identifier, u16(dcid) + u16(scid) + u16(result) + u16(status))


def configuration_req(identifier, dcid, options=b'', flags=0):
    return command(0x04, identifier, u16(dcid) + u16(flags) + options)


def configuration_rsp(identifier, scid, result=0, options=b'', flags=0):
    return command(0x05, identifier, u16(scid) + u16(flags) + u16(result) + options)


def mtu_option(mtu):
    return bytes([0x01, 0x02]) + u16(mtu)


def retransmission_option(mode, tx_window=10, max_transmit=3, retransmission_timeout=2000,
                          monitor_timeout=12000, mps=600):
    """Retransmission and Flow Control option (type 0x04, 9 octets); mode 0x03 is
    Enhanced Retransmission, 0x04 Streaming."""
    return bytes([0x04, 0x09, mode, tx_window, max_transmit]) + u16(retransmission_timeout) \
        + u16(monitor_timeout) + u16(mps)


def disconnection_req(identifier, dcid, scid):
    return command(0x06, identifier, u16(dcid) + u16(scid))


def disconnection_rsp(identifier, dcid, scid):
    return command(0x07, identifier, u16(dcid) + u16(scid))


def echo_req(identifier, data=b''):
    return command(0x08, identifier, data)


def echo_rsp(identifier, data=b''):
    return command(0x09, identifier, data)


def information_req(identifier, info_type):
    return command(0x0A, identifier, u16(info_type))


def information_rsp(identifier, info_type, result, data):
    return command(0x0B, identifier, u16(info_type) + u16(result) + data)


def le_credit_req(identifier, psm, scid, mtu, mps, credits):
    return command(0x14, identifier, u16(psm) + u16(scid) + u16(mtu) + u16(mps) + u16(credits))


def le_credit_rsp(identifier, dcid, mtu, mps, credits, result):
    return command(0x15, identifier, u16(dcid) + u16(mtu) + u16(mps) + u16(credits) + u16(result))


def credit_ind(identifier, cid, credits):
    return command(0x16, identifier, u16(cid) + u16(credits))


def ecred_req(identifier, psm, mtu, mps, credits, scids):
    return command(0x17, identifier, u16(psm) + u16(mtu) + u16(mps) + u16(credits)
                   + b''.join(u16(cid) for cid in scids))


def ecred_rsp(identifier, mtu, mps, credits, result, dcids):
    return command(0x18, identifier, u16(mtu) + u16(mps) + u16(credits) + u16(result)
                   + b''.join(u16(cid) for cid in dcids))


def k_frames(sdu, mps):
    """An SDU as the payloads of its K-frames (Core Vol 3 Part A, 3.4.3): the first
    carries the 2-octet SDU length, every one at most `mps` octets."""
    data = u16(len(sdu)) + sdu
    return [data[offset:offset + mps] for offset in range(0, len(data), mps)]


def crc16(data):
    """The FCS of Core Vol 3 Part A, 3.3.5: CRC-16 with generator x^16 + x^15 + x^2 + 1
    (0x8005 reflected: 0xA001), initial value 0, over the basic header, control field
    and payload."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def i_frame(cid, txseq, reqseq, sar, information, sdu_length=None):
    """An I-frame with the standard (16-bit) control field and an FCS: the whole PDU."""
    control = txseq << 1 | reqseq << 8 | sar << 14
    body = u16(control) + (u16(sdu_length) if sdu_length is not None else b'') + information
    header = u16(len(body) + 2) + u16(cid)
    return header + body + u16(crc16(header + body))


def s_frame(cid, reqseq, supervisory=0, final=False):
    """An S-frame (bit 0 set) with the standard control field and an FCS."""
    control = 0x0001 | supervisory << 2 | (0x80 if final else 0) | reqseq << 8
    body = u16(control)
    header = u16(len(body) + 2) + u16(cid)
    return header + body + u16(crc16(header + body))


# --- The captures --------------------------------------------------------------------

def bredr_sdp():
    """A BR/EDR link (Connection Complete), an SDP channel the host opens (pending, then
    success), configured both ways, one request and one response (the response in two
    ACL fragments), then closed."""
    c = Capture()
    h = 0x000B
    # HCI_Create_Connection: BD_ADDR, packet type, page scan repetition mode, reserved,
    # clock offset, allow role switch.
    c.command(0x0405, PEER + u16(0xCC18) + bytes([0x01, 0x00]) + u16(0x0000) + bytes([0x01]))
    c.event(0x0F, bytes([0x00, 0x01]) + u16(0x0405))
    connection_complete(c, h)
    c.signaling(h, [connection_req(1, 0x0001, 0x0040)], rx=False)
    c.signaling(h, [connection_rsp(1, 0x0070, 0x0040, result=0x0001, status=0x0002)], rx=True)
    c.signaling(h, [connection_rsp(1, 0x0070, 0x0040, result=0x0000)], rx=True)
    c.signaling(h, [configuration_req(2, 0x0070, mtu_option(672))], rx=False)
    c.signaling(h, [configuration_rsp(2, 0x0040)], rx=True)
    c.signaling(h, [configuration_req(3, 0x0040)], rx=True)
    c.signaling(h, [configuration_rsp(3, 0x0070)], rx=False)
    # SDP_ServiceSearchAttributeRequest: pattern {0x110B}, 0xFFFF octets, all attributes.
    c.l2cap(h, 0x0070, bytes.fromhex('06 0001 000f 3503 19110b ffff 3505 0a0000ffff 00'), rx=False)
    # SDP_ServiceSearchAttributeResponse: an empty attribute list, no continuation.
    c.l2cap(h, 0x0040, bytes.fromhex('07 0001 0005 0002 3500 00'), rx=True, fragment=6)
    c.signaling(h, [disconnection_req(4, 0x0070, 0x0040)], rx=False)
    c.signaling(h, [disconnection_rsp(4, 0x0070, 0x0040)], rx=True)
    c.command(0x0406, u16(h) + bytes([0x13]))
    c.event(0x0F, bytes([0x00, 0x01]) + u16(0x0406))
    disconnection_complete(c, h, reason=0x16)
    c.write('bredr-sdp.btsnoop')


def bredr_att():
    """The peer connects (Connection Request, accepted) and opens ATT over BR/EDR (PSM
    0x001F): it allocates 0x0041, the host 0x0042. The peer is the GATT client."""
    c = Capture()
    h = 0x000C
    c.event(0x04, PEER + bytes([0x0C, 0x02, 0x5A, 0x01]))  # Connection_Request: class 0x5A020C, ACL
    c.command(0x0409, PEER + bytes([0x01]))  # Accept_Connection_Request, stay peripheral
    c.event(0x0F, bytes([0x00, 0x01]) + u16(0x0409))
    c.event(0x12, bytes([0x00]) + PEER + bytes([0x01]))  # Role_Change: now peripheral
    connection_complete(c, h)
    c.signaling(h, [connection_req(1, 0x001F, 0x0041)], rx=True)
    c.signaling(h, [connection_rsp(1, 0x0042, 0x0041, result=0)], rx=False)
    c.signaling(h, [configuration_req(2, 0x0042, mtu_option(512))], rx=True)
    c.signaling(h, [configuration_rsp(2, 0x0041, options=mtu_option(512))], rx=False)
    c.signaling(h, [configuration_req(1, 0x0041, mtu_option(512))], rx=False)
    c.signaling(h, [configuration_rsp(1, 0x0042)], rx=True)
    c.l2cap(h, 0x0042, bytes.fromhex('10 0100 ffff 0028'), rx=True)  # Read_By_Group_Type_Req
    c.l2cap(h, 0x0041, bytes.fromhex('11 06 0100 0500 0018'), rx=False)  # Read_By_Group_Type_Rsp
    c.l2cap(h, 0x0042, bytes.fromhex('0a 0300'), rx=True)  # Read_Req
    c.l2cap(h, 0x0041, bytes.fromhex('0b 4142'), rx=False)  # Read_Rsp
    c.l2cap(h, 0x0041, bytes.fromhex('1b 0300 01'), rx=False)  # Handle_Value_Notification
    c.signaling(h, [disconnection_req(3, 0x0042, 0x0041)], rx=True)
    c.signaling(h, [disconnection_rsp(3, 0x0042, 0x0041)], rx=False)
    c.write('bredr-att.btsnoop')


def le_eatt():
    """An LE link; the host asks for two EATT bearers with one enhanced credit based
    request (0x17), the peer grants the first and refuses the second (DCID 0x0000, result
    0x0004 some refused for resources). ATT runs on the open bearer; a 40-octet Read
    Response spans two K-frames (MPS 23), the first of them in two ACL fragments."""
    c = Capture()
    h = 0x0040
    le_connection_complete(c, h)
    c.signaling(h, [ecred_req(1, 0x0027, mtu=64, mps=23, credits=10, scids=[0x0040, 0x0041])],
                rx=False, cid=0x0005)
    c.signaling(h, [ecred_rsp(1, mtu=64, mps=23, credits=10, result=0x0004, dcids=[0x0060, 0x0000])],
                rx=True, cid=0x0005)
    for frame in k_frames(bytes.fromhex('0a 0300'), 23):  # Read_Req, host to peer on 0x0060
        c.l2cap(h, 0x0060, frame, rx=False)
    value = bytes(range(0x30, 0x30 + 39))
    for index, frame in enumerate(k_frames(bytes([0x0B]) + value, 23)):  # Read_Rsp, 40 octets
        c.l2cap(h, 0x0040, frame, rx=True, fragment=10 if index == 0 else None)
    for frame in k_frames(bytes.fromhex('1b 0300 07'), 23):  # Handle_Value_Notification
        c.l2cap(h, 0x0040, frame, rx=True)
    c.signaling(h, [credit_ind(2, 0x0040, 2)], rx=False, cid=0x0005)
    # The peer sends to the CID it refused: no channel, so no PSM.
    c.l2cap(h, 0x0041, bytes.fromhex('0300 0a0300'), rx=True)
    # ATT on the fixed channel goes on as before.
    c.l2cap(h, 0x0004, bytes.fromhex('02 0002'), rx=False)  # Exchange_MTU_Req 512
    c.l2cap(h, 0x0004, bytes.fromhex('03 f700'), rx=True)  # Exchange_MTU_Rsp 247
    c.write('le-eatt.btsnoop')


def le_credit_based():
    """An LE credit based channel (0x14/0x15) on the dynamic LE_PSM 0x0080: one SDU each
    way, the peer's 60-octet SDU in three K-frames (MPS 30), credits, disconnection."""
    c = Capture()
    h = 0x0041
    le_connection_complete(c, h)
    c.signaling(h, [le_credit_req(1, 0x0080, 0x0040, mtu=100, mps=30, credits=5)], rx=False, cid=0x0005)
    c.signaling(h, [le_credit_rsp(1, 0x0045, mtu=200, mps=30, credits=3, result=0)], rx=True, cid=0x0005)
    for frame in k_frames(b'0123456789', 30):
        c.l2cap(h, 0x0045, frame, rx=False)
    for frame in k_frames(bytes(range(60)), 30):
        c.l2cap(h, 0x0040, frame, rx=True)
    c.signaling(h, [credit_ind(2, 0x0040, 3)], rx=False, cid=0x0005)
    c.signaling(h, [disconnection_req(3, 0x0045, 0x0040)], rx=False, cid=0x0005)
    c.signaling(h, [disconnection_rsp(3, 0x0045, 0x0040)], rx=True, cid=0x0005)
    c.write('le-credit-based.btsnoop')


def bredr_reuse():
    """SDP on host CID 0x0040 / peer CID 0x0070, closed by the peer; then RFCOMM opened
    with the very same CIDs: the frames after it are RFCOMM's."""
    c = Capture()
    h = 0x000B
    connection_complete(c, h)
    c.signaling(h, [connection_req(1, 0x0001, 0x0040)], rx=False)
    c.signaling(h, [connection_rsp(1, 0x0070, 0x0040, result=0)], rx=True)
    c.l2cap(h, 0x0070, bytes.fromhex('06 0001 000f 3503 19110b ffff 3505 0a0000ffff 00'), rx=False)
    c.l2cap(h, 0x0040, bytes.fromhex('07 0001 0005 0002 3500 00'), rx=True)
    c.signaling(h, [disconnection_req(2, 0x0040, 0x0070)], rx=True)
    c.signaling(h, [disconnection_rsp(2, 0x0040, 0x0070)], rx=False)
    c.signaling(h, [connection_req(3, 0x0003, 0x0040)], rx=False)
    c.signaling(h, [connection_rsp(3, 0x0070, 0x0040, result=0)], rx=True)
    c.l2cap(h, 0x0070, bytes.fromhex('03 3f 01 1c'), rx=False)  # RFCOMM SABM on DLCI 0
    c.l2cap(h, 0x0040, bytes.fromhex('03 73 01 d7'), rx=True)  # RFCOMM UA
    c.write('bredr-reuse.btsnoop')


def bredr_multiple_commands():
    """C-frames holding several commands: the peer answers a Connection Request for AVDTP
    and sends its Configuration Request in one frame; the host answers it, sends its own
    and asks for the extended features in one frame; then an echo."""
    c = Capture()
    h = 0x000D
    connection_complete(c, h)
    c.signaling(h, [connection_req(1, 0x0019, 0x0040)], rx=False)
    c.signaling(h, [connection_rsp(1, 0x0050, 0x0040, result=0), configuration_req(7, 0x0040)], rx=True)
    c.signaling(h, [configuration_rsp(7, 0x0050), configuration_req(2, 0x0050, mtu_option(895)),
                    information_req(3, 0x0002)], rx=False)
    c.signaling(h, [configuration_rsp(2, 0x0040), information_rsp(3, 0x0002, 0, u32(0x000002B8))], rx=True)
    c.l2cap(h, 0x0050, bytes.fromhex('00 01'), rx=False)  # AVDTP Discover command
    c.l2cap(h, 0x0040, bytes.fromhex('02 01 04 08'), rx=True)  # AVDTP Discover accept: SEID 1, audio sink
    c.signaling(h, [echo_req(4, b'hi')], rx=False)
    c.signaling(h, [echo_rsp(4)], rx=True)
    c.write('bredr-multiple-commands.btsnoop')


def unannounced():
    """A capture started mid-connection: no connection event at all. Handle 0x0001 shows
    BR/EDR signaling (so it is BR/EDR) and traffic on CID 0x0041, whose Connection Request
    the capture missed, and then on CID 0x0004, which is reserved on BR/EDR but read as ATT
    (as Wireshark reads it); handle 0x0002 shows LE signaling and ATT; handle 0x0003 only
    ATT on CID 0x0004, taken as LE's fixed channel as before."""
    c = Capture()
    c.l2cap(0x0001, 0x0041, bytes.fromhex('0102030405'), rx=True)
    c.signaling(0x0001, [echo_req(9)], rx=True)
    c.signaling(0x0001, [echo_rsp(9)], rx=False)
    c.l2cap(0x0001, 0x0041, bytes.fromhex('060708'), rx=True)
    c.l2cap(0x0001, 0x0004, bytes.fromhex('0a 0300'), rx=False)
    c.l2cap(0x0002, 0x0005, command(0x12, 1, u16(24) + u16(40) + u16(0) + u16(400)), rx=True)
    c.l2cap(0x0002, 0x0004, bytes.fromhex('1b 0300 01'), rx=True)
    c.l2cap(0x0003, 0x0004, bytes.fromhex('0a 0300'), rx=False)
    c.write('unannounced.btsnoop')


def bredr_ertm():
    """A channel on the unnamed dynamic PSM 0x1001 configured for Enhanced Retransmission
    mode both ways: I-frames (one SDU unsegmented, one in a start and an end segment) and
    an S-frame, each with its control field and FCS. Then ATT over BR/EDR in ERTM: its
    I-frames must not be read as if their control field were an ATT opcode."""
    c = Capture()
    h = 0x000E
    connection_complete(c, h)
    c.signaling(h, [connection_req(1, 0x1001, 0x0040)], rx=False)
    c.signaling(h, [connection_rsp(1, 0x0080, 0x0040, result=0)], rx=True)
    c.signaling(h, [configuration_req(2, 0x0080, retransmission_option(0x03))], rx=False)
    c.signaling(h, [configuration_rsp(2, 0x0040, options=retransmission_option(0x03))], rx=True)
    c.signaling(h, [configuration_req(5, 0x0040, retransmission_option(0x03))], rx=True)
    c.signaling(h, [configuration_rsp(5, 0x0080, options=retransmission_option(0x03))], rx=False)
    c.acl(h, i_frame(0x0080, txseq=0, reqseq=0, sar=0, information=b'hello'), rx=False)
    c.acl(h, i_frame(0x0040, txseq=0, reqseq=1, sar=1, information=b'abcd', sdu_length=8), rx=True)
    c.acl(h, i_frame(0x0040, txseq=1, reqseq=1, sar=2, information=b'efgh'), rx=True)
    c.acl(h, s_frame(0x0080, reqseq=2), rx=False)
    # ATT over BR/EDR, Enhanced Retransmission mode.
    c.signaling(h, [connection_req(6, 0x001F, 0x0041)], rx=False)
    c.signaling(h, [connection_rsp(6, 0x0081, 0x0041, result=0)], rx=True)
    c.signaling(h, [configuration_req(7, 0x0081, retransmission_option(0x03))], rx=False)
    c.signaling(h, [configuration_rsp(7, 0x0041, options=retransmission_option(0x03))], rx=True)
    c.signaling(h, [configuration_req(8, 0x0041, retransmission_option(0x03))], rx=True)
    c.signaling(h, [configuration_rsp(8, 0x0081, options=retransmission_option(0x03))], rx=False)
    c.acl(h, i_frame(0x0081, txseq=0, reqseq=0, sar=0, information=bytes.fromhex('0a 0300')), rx=False)
    c.acl(h, i_frame(0x0041, txseq=0, reqseq=1, sar=0, information=bytes.fromhex('0b 4142')), rx=True)
    c.write('bredr-ertm.btsnoop')


if __name__ == '__main__':
    bredr_sdp()
    bredr_att()
    le_eatt()
    le_credit_based()
    bredr_reuse()
    bredr_multiple_commands()
    unannounced()
    bredr_ertm()
