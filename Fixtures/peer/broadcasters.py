'''Sensors that only advertise (`--advertisers N`): the BTHome, ATC (pvvx firmware) and
RuuviTag thermometers the gateway decodes, as non-connectable advertisers on the link.

Each advertiser has a static random address (`--advertiser-address` + its index), takes a
reading every `--advertiser-period-ms` (its packet counter one more each time) and sends the
reading's frame every `--advertiser-interval-ms` until the next one, as these sensors do.
The frames are built from the formats' own descriptions:

* `bthome`: bthome.io/format, BTHome v2, service data 0xFCD2: the device information octet
  0x40 (v2, not encrypted), then objects in id order: 0x00 packet id, 0x01 battery (%),
  0x02 temperature (sint16, 0.01 °C), 0x03 humidity (uint16, 0.01 %), little-endian.
* `atc`: the pvvx/ATC_MiThermometer firmware's custom format, service data 0x181A, 15
  octets: the MAC least significant first, temperature (sint16, 0.01 °C), humidity
  (uint16, 0.01 %), battery (mV), battery (%), counter, flags; little-endian.
* `bthome-encrypted` (only when asked for): the same objects, encrypted as
  bthome.io/encryption says: the device information octet 0x41, AES-CCM with a 4-octet MIC
  under ENCRYPTION_KEY, the nonce the MAC, the UUID as sent (D2 FC), that octet and the
  4-octet counter (the reading's count, little-endian) sent after the ciphertext, then the MIC.
* `ruuvi`: Ruuvi's data format 5 (RAWv2), manufacturer data of company 0x0499, 24 octets
  big-endian: 0x05, temperature (0.005 °C), humidity (0.0025 %), pressure (Pa − 50000),
  acceleration x, y, z (mG), battery (mV − 1600, 11 bits) with TX power ((dBm + 40) / 2,
  5 bits), movement counter, measurement sequence number, MAC.

Reading k (from 1) of advertiser i: temperature 20.00 + (i % 10) + (k % 20) / 10 °C,
humidity 40.00 + (k % 30) %, battery 90 %, 3000 mV; Ruuvi's pressure 1000.00 hPa and
acceleration 0, 0, 1 g. The log says `advertisers: N (bthome, atc, ruuvi) from ADDRESS`.

Phones (`--phone-irk`, one per IRK): advertisers behind resolvable private addresses that
rotate every `--rotate-every` seconds, as a phone's do, for the gateway's presence. Each
address is prand (22 random bits under the top bits 0b01) then hash = ah(IRK, prand), as
Core Vol 6 Part B 1.3.2.2 and Vol 3 Part H 2.2.2 define them; the IRK is given as the
specification prints keys (most significant octet first). The log says `phone K: ADDRESS`
for each address a phone takes, and `phone K: quiet` when SIGUSR1 silences it.
'''

from __future__ import annotations

import asyncio
import logging
import secrets
import struct

# Bumble is imported where it is used: peer.py reads KINDS before it imports Bumble (a fast --help).

logger = logging.getLogger('peer')

KINDS = ('bthome', 'atc', 'ruuvi')
# Also offered, not by default: BTHome v2 encrypted with ENCRYPTION_KEY.
ALL_KINDS = KINDS + ('bthome-encrypted',)
# bthome.io's encryption example key (bthome.io/encryption).
ENCRYPTION_KEY = bytes.fromhex('231d39c1d7cc1ab1aee224cd096db932')
DEFAULT_ADDRESS = 'F1:AD:00:00:00:01'
# Sent once per slot: the advertisers spread over an interval, as real ones drift apart.
SLOTS = 10


def reading(index: int, count: int) -> tuple[float, float]:
    '''Temperature (°C) and humidity (%) of reading `count` of advertiser `index`.'''
    return 20.0 + index % 10 + (count % 20) / 10, 40.0 + count % 30


def frame(kind: str, index: int, count: int, mac: bytes) -> bytes:
    '''The advertising data of reading `count` (from 1) of advertiser `index`; `mac` is
    the address most significant octet first.'''
    temperature, humidity = reading(index, count)
    flags = bytes([2, 0x01, 0x06])
    if kind == 'bthome':
        data = (bytes([0xD2, 0xFC, 0x40, 0x00, count & 0xFF, 0x01, 90, 0x02])
                + struct.pack('<h', round(temperature * 100)) + bytes([0x03])
                + struct.pack('<H', round(humidity * 100)))
        return flags + bytes([len(data) + 1, 0x16]) + data
    if kind == 'bthome-encrypted':
        from cryptography.hazmat.primitives.ciphers.aead import AESCCM
        objects = (bytes([0x00, count & 0xFF, 0x01, 90, 0x02]) + struct.pack('<h', round(temperature * 100))
                   + bytes([0x03]) + struct.pack('<H', round(humidity * 100)))
        counter = struct.pack('<I', count)
        sealed = AESCCM(ENCRYPTION_KEY, tag_length=4).encrypt(mac + bytes([0xD2, 0xFC, 0x41]) + counter, objects, None)
        data = bytes([0xD2, 0xFC, 0x41]) + sealed[:-4] + counter + sealed[-4:]
        return flags + bytes([len(data) + 1, 0x16]) + data
    if kind == 'atc':
        data = (bytes([0x1A, 0x18]) + mac[::-1] + struct.pack('<hHHBBB', round(temperature * 100),
                                                              round(humidity * 100), 3000, 90,
                                                              count & 0xFF, 0))
        return flags + bytes([len(data) + 1, 0x16]) + data
    if kind == 'ruuvi':
        power = (3000 - 1600) << 5 | (4 + 40) // 2
        data = (bytes([0x99, 0x04, 0x05])
                + struct.pack('>hHHhhhHBH', round(temperature / 0.005), round(humidity / 0.0025),
                              100000 - 50000, 0, 0, 1000, power, 0, count & 0xFFFF)
                + mac)
        return flags + bytes([len(data) + 1, 0xFF]) + data
    raise ValueError(f'unknown advertiser kind {kind!r}')


def address(base: str, index: int) -> str:
    '''Advertiser `index`'s address: `base` + index.'''
    value = int(base.replace(':', ''), 16) + index
    text = f'{value:012X}'
    return ':'.join(text[i:i + 2] for i in range(0, 12, 2))


class Broadcasters:
    '''`count` advertisers of `kinds` in turn, on `link`. No controller on the link owns
    their addresses, so peer.py's host-facing controller looks them up in `address_keys`
    (address octets as the PDU carries them) and reports them as ADV_NONCONN_IND.'''

    def __init__(self, link, count: int, kinds: list[str], base: str, period_s: float,
                 interval_s: float) -> None:
        self.link = link
        self.kinds = [kinds[i % len(kinds)] for i in range(count)]
        self.addresses = [address(base, i) for i in range(count)]
        self.address_keys = {bytes.fromhex(a.replace(':', ''))[::-1] for a in self.addresses}
        self.period_s = period_s
        self.interval_s = interval_s
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        logger.info('advertisers: %d (%s) from %s', len(self.kinds),
                    ', '.join(sorted(set(self.kinds))), self.addresses[0] if self.addresses else '-')
        self.task = asyncio.get_running_loop().create_task(self.run())

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def run(self) -> None:
        from bumble import hci, ll
        loop = asyncio.get_running_loop()
        start = loop.time()
        own = [hci.Address(a, hci.Address.RANDOM_DEVICE_ADDRESS) for a in self.addresses]
        macs = [bytes.fromhex(a.replace(':', '')) for a in self.addresses]
        slot = 0
        while True:
            elapsed = loop.time() - start
            # Advertiser i takes its readings a fraction of a period after i - 1 does.
            for i in range(slot, len(self.kinds), SLOTS):
                phase = self.period_s * i / max(1, len(self.kinds))
                count = 1 + int(max(0.0, elapsed - phase) / self.period_s)
                pdu = ll.AdvInd(advertiser_address=own[i], data=frame(self.kinds[i], i, count, macs[i]))
                self.link.send_advertising_pdu(None, pdu)
            slot = (slot + 1) % SLOTS
            # The next slot's time, not a fixed sleep: a slow turn does not slow the rate.
            next_at = start + (int(elapsed / (self.interval_s / SLOTS)) + 1) * self.interval_s / SLOTS
            await asyncio.sleep(max(0.0, next_at - loop.time()))


# A phone's advertising data: flags (LE General Discoverable, no BR/EDR) and manufacturer
# data of the test company 0xFFFF, which no decoder of the gateway claims.
PHONE_DATA = bytes([2, 0x01, 0x06, 4, 0xFF, 0xFF, 0xFF, 0x50])
PHONE_INTERVAL_S = 0.1


def fresh_prand() -> bytes:
    '''A resolvable private address's prand, most significant octet first: the top two bits
    0b01, the other 22 random and neither all 0 nor all 1 (Core Vol 6 Part B 1.3.2.2). Not
    Bumble's crypto.generate_prand, which leaves the top bit random.'''
    while True:
        bits = secrets.randbits(22)
        if bits not in (0, (1 << 22) - 1):
            return (0x40_0000 | bits).to_bytes(3, 'big')


def resolvable_private_address(irk: bytes, prand: bytes) -> str:
    '''The address (AA:BB:… text) of `prand` under `irk`, both most significant octet first
    as the specification writes them: prand in the upper 24 bits, ah(IRK, prand) in the
    lower (Vol 3 Part H 2.2.2). Bumble's ah takes and gives octets least significant first,
    as they go on the air, hence the reversals.'''
    from bumble import crypto
    value = prand + crypto.ah(irk[::-1], prand[::-1])[::-1]
    return ':'.join(f'{octet:02X}' for octet in value)


class Phones:
    '''A phone per IRK (most significant octet first), each advertising every 100 ms from a
    resolvable private address it changes every `rotate_every_s`. No controller owns these
    addresses: each new one goes into `broadcasting` (peer.py's BROADCASTING) so the
    host-facing controller reports it as ADV_NONCONN_IND.'''

    def __init__(self, link, irks: list[bytes], rotate_every_s: float, broadcasting: set) -> None:
        self.link = link
        self.irks = irks
        self.rotate_every_s = rotate_every_s
        self.broadcasting = broadcasting
        self.quiet = [False] * len(irks)
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        logger.info('phones: %d, a new address every %g s', len(self.irks), self.rotate_every_s)
        self.task = asyncio.get_running_loop().create_task(self.run())

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def silence_next(self) -> None:
        '''SIGUSR1: the first phone still advertising stops (leaves), so a test can watch a
        tracker go `not_home` while the other phones go on.'''
        for index, quiet in enumerate(self.quiet):
            if not quiet:
                self.quiet[index] = True
                logger.info('phone %d: quiet', index + 1)
                return

    async def run(self) -> None:
        from bumble import hci, ll
        loop = asyncio.get_running_loop()
        current: list = [None] * len(self.irks)
        rotated_at = [0.0] * len(self.irks)
        while True:
            now = loop.time()
            for index, irk in enumerate(self.irks):
                if self.quiet[index]:
                    continue
                if current[index] is None or now - rotated_at[index] >= self.rotate_every_s:
                    text = resolvable_private_address(irk, fresh_prand())
                    current[index] = hci.Address(text, hci.Address.RANDOM_DEVICE_ADDRESS)
                    self.broadcasting.add(bytes(current[index].address_bytes))
                    rotated_at[index] = now
                    logger.info('phone %d: %s', index + 1, text)
                self.link.send_advertising_pdu(None, ll.AdvInd(advertiser_address=current[index], data=PHONE_DATA))
            await asyncio.sleep(PHONE_INTERVAL_S)
