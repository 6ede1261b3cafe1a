'''The peer as a CENTRAL (`peer.py --central`): a Bumble Device on controller B that a test
drives line by line, to test our host as a peripheral.

The test writes one JSON command per line to the peer's stdin; the peer answers each with
exactly one JSON line on stdout (after the READY line), in order:
`{"ok": true, ...}` or `{"ok": false, "error": "...", "att_error": CODE}`. Commands:

| op | arguments | answer |
|---|---|---|
| `scan` | `name` or `connectable` (true), `timeout` (s, default the hang guard) | the first advertiser whose local name (complete or shortened, in ADV or scan response) is `name`, or with `connectable` and no name the first connectable one: `address`, `address_type` (0 public, 1 random), `data` (hex: every AD structure, the scan response's merged in by Bumble), `scan_response` (hex, its own octets), `connectable` |
| `connect` | `address`, `address_type` | `handle`: the link, from controller B's side |
| `mtu` | `mtu` | `mtu`: the ATT_MTU after the exchange |
| `discover` | | `services`: `[{uuid, start, end, characteristics: [{uuid, handle, properties, descriptors: [{uuid, handle}]}]}]` |
| `read` | `handle` | `value` (hex); a long value is read with Read Blob |
| `read_by_type` | `start`, `end`, `uuid` | `attributes`: `[{handle, value}]`, every page of Read By Type (declarations with their own handles) |
| `write` | `handle`, `value` (hex), `with_response` (default true) | |
| `write_long` | `handle`, `value` (hex), `offset` (default 0) | Prepare Write parts of ATT_MTU - 5, then Execute Write |
| `reliable_write` | `writes`: `[{handle, value}]` | each prepared, the echo checked, then executed |
| `subscribe` | `handle` (value handle), `indicate` (default false) | writes the CCCD; values are collected from then on (indications are confirmed by Bumble) |
| `unsubscribe` | `handle` | writes 0000 to the CCCD |
| `listen` | `handle`, `indicate` (default false) | collects the values of `handle` from now on WITHOUT writing the CCCD: what a bonded central does on a new link, its subscription kept by the server |
| `values` | `handle`, `count`, `timeout` (s, default the hang guard) | `values` (hex): the first `count` values received for `handle` since it was subscribed, once that many arrived (removed from the collection) |
| `pair` | `sc` (default true), `mitm` (default true), `io` (`none` default, `display`, `display-yesno`, `keyboard`, `keyboard-display`), `bonding` (default true), `wait` (default true) | pairs as the initiator and encrypts: `encrypted`, `method`. With `wait` false it answers at once; `pair_wait` gives the result. A Security Request from the peripheral starts a pairing with the last options by itself |
| `pair_wait` | `timeout` (s, default the hang guard) | the result of the pairing started with `wait` false: `encrypted`, or the failure |
| `pairing_output` | `timeout` | the number Bumble's user was shown (passkey or numeric comparison value): `number`, `kind` (`passkey` or `compare`) |
| `pairing_input` | `number` | the passkey Bumble's user types (answered once pairing asks for it) |
| `keys` | | what the keystore holds for the peer: `address`, `ltk` (Secure Connections), `ltk_central` (a legacy LTK the peripheral gave, with `ediv`, `rand`), `irk`, `csrk`, `authenticated` |
| `encrypt` | | encrypts with the bond's key (as on a reconnection): `encrypted` |
| `disconnect` | `reason` (default 0x13) | `reason`: the reason the host reported |
| `wait_disconnection` | `timeout` | `reason` once the link ends |
| `l2cap_open` | `psm`, `mtu` (2048), `mps` (247), `credits` (32) | opens an LE credit based channel: `channel` (its index), `peer_mtu`, `peer_mps`; its SDUs are collected |
| `l2cap_send` | `sdus` (hex list), `channel` (default the last opened) | sends each SDU, then waits until Bumble has sent them |
| `l2cap_receive` | `count`, `channel`, `timeout` | `sdus` (hex): the first `count` SDUs received, once that many arrived |
| `l2cap_close` | `channel` | disconnects the channel |
| `send_att` | `pdus` (hex list) | sends raw ATT PDUs back to back without waiting for answers: a client that breaks the one-request rule or sends garbage |

With `peer.py --central --centrals N` there are N centrals (controllers B, B2, …, each with
its own random address, the first `--address`, the next ones counting up); every command takes
`central` (0-based, default 0) and is run by that one; commands run one at a time, in order,
while each central keeps collecting its values.

Errors from the peer's ATT server answers carry `att_error` (the code).

Every wait (`scan`, `connect`, `values`, `pair_wait`, `pairing_output`, `disconnect`,
`wait_disconnection`, `l2cap_receive`) ends when its condition holds, or after the hang guard
(hang_guard.py: the Swift tests' own bound): a `timeout` argument only shortens it.
'''

import asyncio
import json
import logging
import os
import sys

from bumble import att, gatt, hci, l2cap
from bumble.core import UUID, PhysicalTransport
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.pairing import PairingConfig, PairingDelegate

from hang_guard import HANG_GUARD

logger = logging.getLogger('peer.central')


def local_names(data: bytes) -> list[str]:
    '''The Complete and Shortened Local Names of AD structures.'''
    names, index = [], 0
    while index < len(data):
        length = data[index]
        if length == 0 or index + 1 + length > len(data):
            break
        if data[index + 1] in (0x08, 0x09):
            names.append(data[index + 2:index + 1 + length].decode('utf-8', 'replace'))
        index += 1 + length
    return names


IO_CAPABILITIES = {
    'none': PairingDelegate.NO_OUTPUT_NO_INPUT,
    'display': PairingDelegate.DISPLAY_OUTPUT_ONLY,
    'display-yesno': PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    'keyboard': PairingDelegate.KEYBOARD_INPUT_ONLY,
    'keyboard-display': PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}


class TestPairingDelegate(PairingDelegate):
    '''The user at the central, played by the test: what is shown goes to `outputs`, what is
    typed comes from `inputs`; numeric comparison is accepted once shown.'''

    def __init__(self, io: str):
        every = (PairingDelegate.KeyDistribution.DISTRIBUTE_ENCRYPTION_KEY
                 | PairingDelegate.KeyDistribution.DISTRIBUTE_IDENTITY_KEY
                 | PairingDelegate.KeyDistribution.DISTRIBUTE_SIGNING_KEY)
        super().__init__(io_capability=IO_CAPABILITIES[io], local_initiator_key_distribution=every,
                         local_responder_key_distribution=every)
        self.outputs: asyncio.Queue = asyncio.Queue()
        self.inputs: asyncio.Queue = asyncio.Queue()

    async def display_number(self, number: int, digits: int) -> None:
        await self.outputs.put(('passkey', number))

    async def compare_numbers(self, number: int, digits: int) -> bool:
        await self.outputs.put(('compare', number))
        return True

    async def get_number(self) -> int | None:
        return await self.inputs.get()


class CentralDriver:
    '''Controller B's Device as a central, run by the commands of one test.'''

    def __init__(self, device: Device):
        self.device = device
        self.connection = None
        self.peer: Peer | None = None
        self.seen: dict[tuple[str, int], dict] = {}
        self.found: asyncio.Future | None = None
        self.wanted_name: str | None = None
        self.wanted_connectable = False
        self.values: dict[int, list[bytes]] = {}
        self.value_waiters: list = []
        self.characteristics: dict[int, object] = {}
        self.disconnected: asyncio.Future | None = None
        self.pairing_delegate = TestPairingDelegate('none')
        # The identity it distributes is the random address it connects with (Bumble's
        # default, the public address, would not name it when it comes back).
        self.pairing_config = PairingConfig(sc=True, mitm=True, bonding=True, delegate=self.pairing_delegate,
                                            identity_address_type=PairingConfig.AddressType.RANDOM)
        device.pairing_config_factory = lambda _connection: self.pairing_config
        self.pairing: asyncio.Task | None = None
        self.l2cap_channels: list = []
        device.on('advertisement', self.on_advertisement)

    # Scanning ------------------------------------------------------------------------------
    def on_advertisement(self, advertisement) -> None:
        address = advertisement.address
        key = (str(address).split('/')[0], 0 if address.is_public else 1)
        entry = self.seen.setdefault(key, {'data': b'', 'scan_response': b'', 'connectable': False})
        # Bumble holds a scannable advertisement until its scan response and reports the two
        # merged (`data`), with the response's own octets in `data_bytes`.
        entry['data'] = bytes(advertisement.data)
        entry['scan_response'] = bytes(advertisement.data_bytes) if advertisement.is_scan_response else b''
        entry['connectable'] = bool(advertisement.is_connectable)
        if self.found is not None and not self.found.done():
            if (self.wanted_name is not None and self.wanted_name in local_names(entry['data'])) or \
                    (self.wanted_name is None and self.wanted_connectable and entry['connectable']):
                self.found.set_result((key, entry))

    async def scan(self, name: str | None = None, connectable: bool = False, timeout: float = HANG_GUARD) -> dict:
        '''The first advertiser whose Local Name is `name`, or with no name, the first
        connectable one (a link where ours is the only advertiser).'''
        if name is None and not connectable:
            raise ValueError('scan needs a name, or connectable: true')
        self.wanted_name = name
        self.wanted_connectable = connectable
        self.found = asyncio.get_running_loop().create_future()
        self.seen.clear()
        await self.device.start_scanning(active=True, filter_duplicates=False)
        try:
            (address, address_type), entry = await asyncio.wait_for(self.found, timeout)
        finally:
            await self.device.stop_scanning()
        return {'address': address, 'address_type': address_type, 'data': entry['data'].hex(),
                'scan_response': entry['scan_response'].hex(), 'connectable': entry['connectable']}

    # The link ------------------------------------------------------------------------------
    async def connect(self, address: str, address_type: int) -> dict:
        kind = hci.Address.PUBLIC_DEVICE_ADDRESS if address_type == 0 else hci.Address.RANDOM_DEVICE_ADDRESS
        self.connection = await self.device.connect(hci.Address(address, kind), transport=PhysicalTransport.LE,
                                                    own_address_type=hci.OwnAddressType.RANDOM, timeout=HANG_GUARD)
        self.disconnected = asyncio.get_running_loop().create_future()
        connection = self.connection

        def on_disconnection(reason):
            if self.disconnected is not None and not self.disconnected.done():
                self.disconnected.set_result(reason)

        connection.on('disconnection', on_disconnection)
        # As a central app does: a peripheral's Security Request is answered by pairing.
        connection.on('security_request', lambda _auth_req: asyncio.get_running_loop().create_task(self._pair_quietly()))
        self.peer = Peer(connection)
        self.values.clear()
        # Bumble resolves a private address with the IRKs of its bonds as the link comes up:
        # `peer_address` is then the identity behind it, `peer_resolvable_address` the
        # address connected to.
        resolvable = connection.peer_resolvable_address
        return {'handle': connection.handle, 'peer_address': str(connection.peer_address).split('/')[0],
                'peer_resolvable_address': str(resolvable).split('/')[0] if resolvable is not None else None}

    async def resolve(self, address: str) -> dict:
        '''The identity address the IRKs of our bonds resolve `address` (a resolvable private
        address) to, or None.'''
        resolver = self.device.address_resolver
        identity = resolver.resolve(hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS)) if resolver is not None else None
        return {'identity': str(identity).split('/')[0] if identity is not None else None}

    async def disconnect(self, reason: int = 0x13) -> dict:
        await self.connection.disconnect(reason)
        return {'reason': await asyncio.wait_for(self.disconnected, HANG_GUARD)}

    async def wait_disconnection(self, timeout: float = HANG_GUARD) -> dict:
        return {'reason': await asyncio.wait_for(self.disconnected, timeout)}

    async def _pair_quietly(self) -> None:
        try:
            await self.connection.pair()
        except Exception:
            logger.exception('pairing after a Security Request')

    async def pair(self, sc: bool = True, mitm: bool = True, io: str = 'none', bonding: bool = True, wait: bool = True) -> dict:
        '''Pairs as the initiator (by default LE Secure Connections, bonding, NoInputNoOutput:
        Just Works) and encrypts.'''
        self.pairing_delegate = TestPairingDelegate(io)
        self.pairing_config = PairingConfig(sc=sc, mitm=mitm, bonding=bonding, delegate=self.pairing_delegate,
                                            identity_address_type=PairingConfig.AddressType.RANDOM)
        self.pairing = asyncio.get_running_loop().create_task(self.connection.pair())
        if not wait:
            return {}
        return await self.pair_wait()

    async def pair_wait(self, timeout: float = HANG_GUARD) -> dict:
        await asyncio.wait_for(self.pairing, timeout)
        return {'encrypted': bool(self.connection.is_encrypted)}

    async def pairing_output(self, timeout: float = HANG_GUARD) -> dict:
        kind, number = await asyncio.wait_for(self.pairing_delegate.outputs.get(), timeout)
        return {'kind': kind, 'number': number}

    async def pairing_input(self, number: int) -> dict:
        await self.pairing_delegate.inputs.put(number)
        return {}

    async def keys(self) -> dict:
        keys = await self.device.keystore.get(str(self.connection.peer_address))
        if keys is None:
            for name, candidate in await self.device.keystore.get_all():
                keys, address = candidate, name
                break
        else:
            address = str(self.connection.peer_address)
        if keys is None:
            return {'address': None}
        answer = {'address': address, 'authenticated': False}
        for name in ('ltk', 'ltk_central', 'irk', 'csrk'):
            key = getattr(keys, name)
            if key is not None:
                answer[name] = bytes(key.value).hex()
                answer['authenticated'] = answer['authenticated'] or bool(key.authenticated)
                if name == 'ltk_central':
                    answer['ediv'] = key.ediv
                    answer['rand'] = bytes(key.rand).hex()
        return answer

    async def encrypt(self) -> dict:
        await self.connection.encrypt()
        return {'encrypted': bool(self.connection.is_encrypted)}

    # GATT ----------------------------------------------------------------------------------
    async def mtu(self, mtu: int) -> dict:
        return {'mtu': await self.peer.request_mtu(mtu)}

    async def discover(self) -> dict:
        await self.peer.discover_all()
        services = []
        for service in self.peer.services:
            characteristics = []
            for characteristic in service.characteristics:
                self.characteristics[characteristic.handle] = characteristic
                characteristics.append({
                    'uuid': characteristic.uuid.to_hex_str(), 'handle': characteristic.handle,
                    'properties': int(characteristic.properties),
                    'descriptors': [{'uuid': d.type.to_hex_str(), 'handle': d.handle} for d in characteristic.descriptors]})
            services.append({'uuid': service.uuid.to_hex_str(), 'start': service.handle, 'end': service.end_group_handle,
                             'characteristics': characteristics})
        return {'services': services}

    async def read(self, handle: int) -> dict:
        return {'value': bytes(await self.peer.read_value(handle)).hex()}

    async def read_by_type(self, start: int, end: int, uuid: str) -> dict:
        '''Read By Type over start...end, page after page: each attribute's handle and value
        (declarations, with the handles Bumble's discovery keeps to itself).'''
        found = []
        while start <= end:
            try:
                response = await self._request(att.ATT_Read_By_Type_Request(
                    starting_handle=start, ending_handle=end, attribute_type=UUID(uuid)))
            except att.ATT_Error as error:
                if error.error_code == att.ATT_ATTRIBUTE_NOT_FOUND_ERROR:
                    break
                raise
            found += [{'handle': handle, 'value': bytes(value).hex()} for handle, value in response.attributes]
            start = response.attributes[-1][0] + 1
        return {'attributes': found}

    async def write(self, handle: int, value: str, with_response: bool = True) -> dict:
        await self.peer.write_value(handle, bytes.fromhex(value), with_response=with_response)
        return {}

    async def _request(self, request) -> att.ATT_PDU:
        response = await self.peer.gatt_client.send_request(request)
        if isinstance(response, att.ATT_Error_Response):
            raise att.ATT_Error(error_code=response.error_code, att_handle=response.attribute_handle_in_error)
        return response

    async def write_long(self, handle: int, value: str, offset: int = 0) -> dict:
        data = bytes.fromhex(value)
        part = max(1, self.connection.att_mtu - 5)
        try:
            for start in range(0, len(data), part):
                await self._request(att.ATT_Prepare_Write_Request(
                    attribute_handle=handle, value_offset=offset + start, part_attribute_value=data[start:start + part]))
        except att.ATT_Error:
            await self._request(att.ATT_Execute_Write_Request(flags=0))
            raise
        await self._request(att.ATT_Execute_Write_Request(flags=1))
        return {}

    async def reliable_write(self, writes: list) -> dict:
        for write in writes:
            value = bytes.fromhex(write['value'])
            response = await self._request(att.ATT_Prepare_Write_Request(
                attribute_handle=write['handle'], value_offset=0, part_attribute_value=value))
            if bytes(response.part_attribute_value) != value:
                await self._request(att.ATT_Execute_Write_Request(flags=0))
                raise RuntimeError('reliable write: the echo differs')
        await self._request(att.ATT_Execute_Write_Request(flags=1))
        return {}

    async def subscribe(self, handle: int, indicate: bool = False) -> dict:
        characteristic = self.characteristics[handle]
        self.values[handle] = []

        def on_value(value, handle=handle):
            self.values.setdefault(handle, []).append(bytes(value))
            self._wake()

        await self.peer.subscribe(characteristic, on_value, prefer_notify=not indicate)
        return {}

    async def listen(self, handle: int, indicate: bool = False) -> dict:
        self.values[handle] = []

        def on_value(value, handle=handle):
            self.values.setdefault(handle, []).append(bytes(value))
            self._wake()

        client = self.peer.gatt_client
        subscribers = client.indication_subscribers if indicate else client.notification_subscribers
        subscribers.setdefault(handle, set()).add(on_value)
        return {}

    async def unsubscribe(self, handle: int) -> dict:
        await self.peer.unsubscribe(self.characteristics[handle])
        return {}

    def _wake(self) -> None:
        for waiter in list(self.value_waiters):
            handle, count, future = waiter
            if len(self.values.get(handle, [])) >= count and not future.done():
                future.set_result(None)

    async def values_of(self, handle: int, count: int, timeout: float = HANG_GUARD) -> dict:
        future = asyncio.get_running_loop().create_future()
        waiter = (handle, count, future)
        self.value_waiters.append(waiter)
        self._wake()
        try:
            await asyncio.wait_for(future, timeout)
        finally:
            self.value_waiters.remove(waiter)
        values = self.values[handle][:count]
        del self.values[handle][:count]
        return {'values': [value.hex() for value in values]}

    # Commands ------------------------------------------------------------------------------
    async def run(self, command: dict) -> dict:
        op = command.pop('op')
        method = {'values': self.values_of}.get(op) or getattr(self, op, None)
        if method is None or op.startswith('_') or op in ('run', 'serve'):
            return {'ok': False, 'error': f'unknown op {op}'}
        try:
            result = await method(**command)
        except att.ATT_Error as error:
            return {'ok': False, 'error': str(error), 'att_error': error.error_code}
        except (asyncio.TimeoutError, TimeoutError):
            logger.exception('central op %s', op)
            wait = command.get('timeout', HANG_GUARD)
            return {'ok': False, 'error': f'TimeoutError: {op} {command} still waiting after {wait:g} s (the hang guard)'}
        except Exception as error:  # the test reads it; the peer goes on
            logger.exception('central op %s', op)
            return {'ok': False, 'error': f'{type(error).__name__}: {error}'}
        return {'ok': True, **result}

    # L2CAP ---------------------------------------------------------------------------------
    async def l2cap_open(self, psm: int, mtu: int = 2048, mps: int = 247, credits: int = 32) -> dict:
        '''Opens an LE credit based channel to `psm` on the link; its SDUs are collected.'''
        channel = await self.connection.create_l2cap_channel(
            spec=l2cap.LeCreditBasedChannelSpec(psm=psm, mtu=mtu, mps=mps, max_credits=credits))
        received: list[bytes] = []
        arrived = asyncio.Event()

        def on_sdu(sdu: bytes) -> None:
            received.append(bytes(sdu))
            arrived.set()

        channel.sink = on_sdu
        self.l2cap_channels.append((channel, received, arrived))
        return {'channel': len(self.l2cap_channels) - 1, 'peer_mtu': channel.peer_mtu, 'peer_mps': channel.peer_mps}

    async def l2cap_send(self, sdus: list, channel: int = -1) -> dict:
        '''Sends each hex SDU on the channel (segmented and paced by credits by Bumble).'''
        target = self.l2cap_channels[channel][0]
        for sdu in sdus:
            target.write(bytes.fromhex(sdu))
        await target.drain()
        return {}

    async def l2cap_receive(self, count: int, channel: int = -1, timeout: float = HANG_GUARD) -> dict:
        '''The first `count` SDUs received on the channel, once that many arrived.'''
        _, received, arrived = self.l2cap_channels[channel]

        async def enough() -> None:
            while len(received) < count:
                arrived.clear()
                await arrived.wait()

        await asyncio.wait_for(enough(), timeout)
        sdus = received[:count]
        del received[:count]
        return {'sdus': [sdu.hex() for sdu in sdus]}

    async def l2cap_close(self, channel: int = -1) -> dict:
        await self.l2cap_channels[channel][0].disconnect()
        return {}

    async def send_att(self, pdus: list) -> dict:
        '''Sends raw ATT PDUs back to back, waiting for no answer (answers that come go to
        Bumble's client, which drops those it did not ask for): a misbehaving client.'''
        for pdu in pdus:
            self.connection.send_l2cap_pdu(att.ATT_CID, bytes.fromhex(pdu))
        return {}


async def serve(drivers: list, out, on_eof) -> None:
    '''Reads commands from stdin until EOF, answering each on `out`; `central` (default 0)
    picks the driver of `peer.py --centrals N`.'''
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(sys.stdin.fileno(), 'rb', 0))
    while True:
        line = await reader.readline()
        if not line:
            on_eof()
            return
        try:
            command = json.loads(line)
            driver = drivers[command.pop('central', 0)]
        except (ValueError, IndexError, TypeError) as error:
            answer = {'ok': False, 'error': f'bad command: {error}'}
        else:
            logger.info('central %d: %s', drivers.index(driver), {k: v for k, v in command.items() if k != 'value'})
            answer = await driver.run(command)
        out.write(json.dumps(answer) + '\n')
        out.flush()


async def start_central(link, controller_class, host_class, address: str, public_address: str, index: int = 0) -> CentralDriver:
    '''Controller B (B2, B3… for `index` 1, 2…) on `link` with a Device that scans and
    connects: a central.'''
    controller = controller_class('B' if index == 0 else f'B{index + 1}', link=link, public_address=public_address)
    config = DeviceConfiguration()
    config.name = 'Bumble central' if index == 0 else f'Bumble central {index + 1}'
    config.address = hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS)
    host = host_class(controller_source=controller, controller_sink=controller)
    device = Device(config=config, host=host)
    await device.power_on()
    return CentralDriver(device)
