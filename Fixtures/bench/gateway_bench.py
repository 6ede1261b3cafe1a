#!/usr/bin/env python3
"""make bench, the gateway row: values per second from a notification to an MQTT subscriber
through one bluejay-gateway, latency p50/p99, the gateway's CPU per value, and decoded
advertisements per second.

A mosquitto on a free port, the Bumble peer with one free-running sensor whose samples carry
CLOCK_MONOTONIC of their taking (--sensor-timestamps; --sensor-direct, or Bumble's own stack
would be the limit at about 15,000 a second), one bluejay-gateway (release build)
subscribed to it, and here a bare MQTT 3.1.1 subscriber on a socket (no client library) that
stamps each value on arrival. Same machine, same clock: latency = arrival - taken.

- latency: at an offered 10000 values/s (`paced`; issue 52's bound: p99 at most 20 ms), and
  at 1000/s (`paced_1000`, the figure of the runs before);
- values_per_s: the sensor offered far more than the gateway can carry (100000/s),
  counted at the subscriber over the window;
- cpu_ms_per_value: the gateway process's user+system CPU over the window (from
  /proc/PID/stat) divided by the values the subscriber got in it;
- adverts_per_s: decoded advertisements per second: the peer's advertisers (BTHome, ATC,
  Ruuvi in turn), each frame a new reading, heard by a passive scan, decoded and published
  to `PREFIX/GATEWAY/ADDRESS/values` (`rate_limit: off`), counted at a subscriber of
  `PREFIX/GATEWAY/+/values`;
- peer_cpu_ms, broker_cpu_ms (in each run's object): what the peer and mosquitto spent in
  the window, to tell the gateway's limit from theirs on a shared machine;
- fleet_rehome_s: four gateways, 24 sensors, two killed: until every sensor is carried
  again (fleet_bench.py).

Standalone: gateway_bench.py --gateway .build/release/bluejay-gateway [--merge bench/results.json]
"""

import argparse
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICKS = os.sysconf('SC_CLK_TCK')


def stop(*processes):
    """Ends each process (None: never started) and waits for it."""
    for process in processes:
        if process is not None:
            process.terminate()
            process.wait()


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def mosquitto(directory):
    executable = shutil.which('mosquitto') or '/usr/sbin/mosquitto'
    port = free_port()
    config = os.path.join(directory, 'mosquitto.conf')
    with open(config, 'w') as out:
        out.write(f'listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n')
    broker = subprocess.Popen([executable, '-c', config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.1).close()
            return broker, port
        except OSError:
            time.sleep(0.02)
    broker.terminate()
    sys.exit('mosquitto did not start')


class Subscriber:
    """A bare MQTT 3.1.1 client: CONNECT, SUBSCRIBE at QoS 0, then PUBLISH packets read."""

    def __init__(self, port, topic):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray()
        self.offset = 0
        client = b'gateway-bench'
        body = struct.pack('>H', 4) + b'MQTT' + bytes([4, 0x02]) + struct.pack('>H', 60) + struct.pack('>H', len(client)) + client
        self.sock.sendall(bytes([0x10]) + self.length(len(body)) + body)
        kind, _ = self.packet()
        assert kind >> 4 == 2, 'no CONNACK'
        topic = topic.encode()
        body = struct.pack('>H', 1) + struct.pack('>H', len(topic)) + topic + b'\x00'
        self.sock.sendall(bytes([0x82]) + self.length(len(body)) + body)
        kind, _ = self.packet()
        assert kind >> 4 == 9, 'no SUBACK'

    @staticmethod
    def length(value):
        out = bytearray()
        while True:
            byte, value = value % 128, value // 128
            out.append(byte | (0x80 if value else 0))
            if not value:
                return bytes(out)

    def fill(self, count):
        """At least `count` unread bytes in the buffer. Read bytes are dropped only when they
        are most of it: at 50,000 values/s slicing the buffer per packet would cost more than
        the gateway does."""
        while len(self.buffer) - self.offset < count:
            data = self.sock.recv(262144)
            if not data:
                raise EOFError
            self.buffer += data

    def packet(self):
        if self.offset > 65536:
            del self.buffer[:self.offset]
            self.offset = 0
        self.fill(2)
        start = self.offset
        kind = self.buffer[start]
        value, shift, index = 0, 0, 1
        while True:
            self.fill(index + 1)
            byte = self.buffer[start + index]
            value |= (byte & 0x7F) << shift
            index += 1
            if not byte & 0x80:
                break
            shift += 7
        self.fill(index + value)
        body = bytes(self.buffer[start + index:start + index + value])
        self.offset = start + index + value
        return kind, body

    def publishes(self, seconds, poll=0.2):
        """(arrival ns, topic, payload) of every PUBLISH for `seconds`."""
        received = []
        deadline = time.monotonic() + seconds
        self.sock.settimeout(poll)
        while time.monotonic() < deadline:
            try:
                kind, body = self.packet()
            except socket.timeout:
                continue
            now = time.monotonic_ns()
            if kind >> 4 != 3:
                continue
            topic_length = struct.unpack_from('>H', body)[0]
            offset = 2 + topic_length + (2 if (kind >> 1) & 3 else 0)
            received.append((now, body[2:2 + topic_length].decode(), body[offset:]))
        return received

    def values(self, seconds):
        """(arrival ns, payload) of every PUBLISH for `seconds`."""
        return [(now, payload) for now, _, payload in self.publishes(seconds)]

    def close(self):
        self.sock.close()


def cpu_ms(pid):
    with open(f'/proc/{pid}/stat') as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / TICKS


def peak_rss_bytes(pid):
    """The process's resident high-water mark so far (VmHWM, what ru_maxrss reports)."""
    with open(f'/proc/{pid}/status') as status:
        for line in status:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    return None


def session(gateway, peer_arguments, config_lines, topic, measure, seconds):
    """A broker, the peer with `peer_arguments`, a subscriber of `topic` (formatted with the
    peer's `address`) and a gateway whose file is the common head and `config_lines` (also
    formatted with `address`). Once values flow: `measure(received, elapsed)` of what the
    subscriber got in `seconds`, with the processes' CPU in that window added."""
    directory = tempfile.mkdtemp(prefix='bluejay-gateway-bench-')
    broker, port = mosquitto(directory)
    peer = subprocess.Popen([os.path.join(ROOT, '.venv/bin/python'), os.path.join(ROOT, 'Fixtures/peer/peer.py')] + peer_arguments,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    process = None
    try:
        line = peer.stdout.readline()
        if not line.startswith('READY '):
            sys.exit(f'the peer did not start: {line!r}')
        fields = dict(part.split('=', 1) for part in line.split()[1:] if '=' in part)
        address = fields['address']
        config = os.path.join(directory, 'gateway.yaml')
        with open(config, 'w') as out:
            out.write(f'gateway: gwb\ntransport: {fields["transport"]}\nbroker: mqtt://127.0.0.1:{port}\n'
                      f'homeassistant: off\nqueue: 1000000\nstats_every: 1h\n' + config_lines.format(address=address))
        subscriber = Subscriber(port, topic.format(address=address))
        environment = dict(os.environ, BLUEJAY_STORE=os.path.join(directory, 'store'))
        process = subprocess.Popen([gateway, config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
        # Streaming: wait for the first values, then a second more to settle.
        warm = subscriber.values(0.5)
        deadline = time.monotonic() + 20
        while not warm and time.monotonic() < deadline:
            warm = subscriber.values(0.5)
        if not warm:
            sys.exit('gateway bench: no value reached the subscriber in 20 s')
        subscriber.values(1.0)
        before = [cpu_ms(pid) for pid in (process.pid, peer.pid, broker.pid)]
        start = time.monotonic()
        received = subscriber.values(seconds)
        elapsed = time.monotonic() - start
        spent = [cpu_ms(pid) - earlier for pid, earlier in zip((process.pid, peer.pid, broker.pid), before)]
        peak = peak_rss_bytes(process.pid)
        subscriber.close()
        figures = measure(received, elapsed)
        figures.update({'cpu_ms': spent[0], 'cpu_ms_per_value': spent[0] / len(received) if received else None,
                        'peer_cpu_ms': spent[1], 'broker_cpu_ms': spent[2], 'peak_rss_bytes': peak})
        return figures
    finally:
        stop(process, peer, broker)
        shutil.rmtree(directory, ignore_errors=True)


def run(gateway, period_ms, seconds):
    """One sensor sampling every `period_ms`, its values at the subscriber: rate and latency."""
    def measure(received, elapsed):
        latencies = []
        samples = []
        for arrival, payload in received:
            value = bytes.fromhex(payload.decode())
            if len(value) >= 11:
                samples.append(struct.unpack_from('<H', value, 1)[0])
                latencies.append((arrival - struct.unpack_from('<Q', value, 3)[0]) / 1e6)
        latencies.sort()
        # How far the sensor's count moved while these arrived (it wraps at 65535): more
        # than arrived means the gateway fell behind or lost some, not the sensor.
        advanced = sum((b - a) % 0xFFFF for a, b in zip(samples, samples[1:]))
        return {'values': len(received), 'seconds': elapsed, 'values_per_s': len(received) / elapsed,
                'offered_per_s': 1000 / period_ms, 'samples_spanned': advanced + 1 if samples else 0,
                'latency_p50_ms': latencies[len(latencies) // 2] if latencies else None,
                'latency_p99_ms': latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else None}
    config = 'peripherals:\n  - address: {address}/random\n    subscribe:\n      - {{service: 180D, characteristic: 2A37}}\n'
    return session(gateway, ['--sensor-period-ms', str(period_ms), '--sensor-timestamps', '--sensor-direct'], config,
                   'bluejay/gwb/{address}/180D/2A37', measure, seconds)


# The advertisers of the adverts run: each sends a new reading every ADVERT_PERIOD_MS (its
# frame once per reading: the interval is the period), ADVERTISERS / period offered in all.
ADVERTISERS = 500
ADVERT_PERIOD_MS = 50


def adverts(gateway, seconds):
    """ADVERTISERS sensors that only advertise, each frame a new reading: decoded
    advertisements per second at the subscriber of every `…/values`."""
    def measure(received, elapsed):
        return {'adverts': len(received), 'seconds': elapsed, 'adverts_per_s': len(received) / elapsed,
                'offered_per_s': ADVERTISERS * 1000 / ADVERT_PERIOD_MS, 'advertisers': ADVERTISERS}
    # The peer's peripheral is configured (the file needs one) and left unsubscribed.
    config = 'scan: passive\nrate_limit: off\ndecode: all\nperipherals:\n  - address: {address}/random\n'
    figures = session(gateway, ['--advertisers', str(ADVERTISERS), '--advertiser-period-ms', str(ADVERT_PERIOD_MS),
                                '--advertiser-interval-ms', str(ADVERT_PERIOD_MS)],
                      config, 'bluejay/gwb/+/values', measure, seconds)
    figures['cpu_ms_per_advert'] = figures.pop('cpu_ms_per_value')
    return figures


def gateway_bench(gateway, seconds=5, fleet=True):
    """The `gateway` object of bench/results.json (without fleet_rehome_s when not `fleet`)."""
    print('gateway: notification -> bluejay-gateway -> mosquitto -> subscriber (one sensor, QoS 1 publish)')
    paced = run(gateway, 0.1, seconds)
    paced_1000 = run(gateway, 1.0, 3)
    flat_out = run(gateway, 0.01, seconds)
    advertised = adverts(gateway, seconds)
    for name, figures in (('paced', paced), ('paced_1000', paced_1000)):
        print(f'  at {figures["offered_per_s"]:.0f} values/s offered: latency p50 {figures["latency_p50_ms"]:.2f} ms, '
              f'p99 {figures["latency_p99_ms"]:.2f} ms, {figures["cpu_ms_per_value"] * 1000:.1f} µs CPU per value ({name})')
    print(f'  at {flat_out["offered_per_s"]:.0f} values/s offered: {flat_out["values_per_s"]:.0f} values/s reached the subscriber, '
          f'{flat_out["cpu_ms_per_value"] * 1000:.1f} µs CPU per value (their samples spanned {flat_out["samples_spanned"]}, '
          f'{flat_out["values"]} arrived; peer {flat_out["peer_cpu_ms"] / flat_out["seconds"] / 10:.0f} % CPU, '
          f'broker {flat_out["broker_cpu_ms"] / flat_out["seconds"] / 10:.0f} %)')
    # Issue 51: the gateway's peak RSS, the largest of the runs it keeps up with. The flat-out
    # run's is its backlog: the session sets `queue: 1000000` so that no value is dropped by
    # our queue, and at 100,000 offered a second that queue fills; it is reported beside.
    peak = max(r['peak_rss_bytes'] or 0 for r in (paced, paced_1000, advertised))
    print(f'  peak RSS {peak / 1e6:.1f} MB (VmHWM, the largest of the paced and advertising runs); '
          f'flat out {(flat_out["peak_rss_bytes"] or 0) / 1e6:.1f} MB, most of it the backlog in a queue of 1,000,000 messages')
    print(f'  {advertised["advertisers"]} advertisers offering {advertised["offered_per_s"]:.0f} readings/s: '
          f'{advertised["adverts_per_s"]:.0f} decoded advertisements/s reached the subscriber, '
          f'{advertised["cpu_ms_per_advert"] * 1000:.1f} µs CPU per advertisement (peer {advertised["peer_cpu_ms"] / advertised["seconds"] / 10:.0f} % CPU)')
    # The fleet's figure (fleet_bench.py, which borrows this file's broker and subscriber).
    rehome = None
    if fleet:
        from fleet_bench import fleet_rehome
        rehome = fleet_rehome(gateway)
        print(f'  fleet of 4 gateways, 24 sensors: every sensor carried again {rehome:.2f} s after kill -9 of two')
    print()
    figures = {'values_per_s': flat_out['values_per_s'], 'latency_p50_ms': paced['latency_p50_ms'],
            'latency_p99_ms': paced['latency_p99_ms'], 'cpu_ms_per_value': flat_out['cpu_ms_per_value'],
            'cpu_ms_per_value_at_1000_per_s': paced_1000['cpu_ms_per_value'],
            'cpu_ms_per_value_at_10000_per_s': paced['cpu_ms_per_value'], 'adverts_per_s': advertised['adverts_per_s'],
            'paced': paced, 'paced_1000': paced_1000, 'flat_out': flat_out, 'adverts': advertised,
            'peak_rss_bytes': peak}
    if rehome is not None:
        figures['fleet_rehome_s'] = rehome
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gateway', required=True, help='a release build of bluejay-gateway')
    parser.add_argument('--seconds', type=float, default=5)
    parser.add_argument('--no-fleet', action='store_true', help='leave out fleet_rehome_s (a comparison of one gateway\'s builds)')
    parser.add_argument('--merge', help='write the figures as the `gateway` object of this results file')
    options = parser.parse_args()
    figures = gateway_bench(options.gateway, options.seconds, fleet=not options.no_fleet)
    print(json.dumps(figures, indent=2, sort_keys=True))
    if options.merge:
        with open(options.merge) as source:
            results = json.load(source)
        # Measured on its own, not in the run the rest of the file comes from: say when and at what.
        commit = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
        figures['measured_alone'] = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), 'commit': commit}
        results['gateway'] = figures
        with open(options.merge, 'w') as out:
            json.dump(results, out, indent=2, sort_keys=True)
            out.write('\n')


if __name__ == '__main__':
    main()
