'''`make bench`'s peripheral rows (issue 35): notifications sent per second as the
peripheral, in memory (bluejay-bench peripheral-notify) and against the Bumble central
(peer.py --central, driven here line by line), and the peak RSS of `bluejay serve` with a
central connected, reading and subscribed.

Standalone: python3 Fixtures/bench/peripheral.py --bluejay B --bench BB [--runs K].'''

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.path.join(ROOT, '.venv/bin/python')
PEER = os.path.join(ROOT, 'Fixtures/peer/peer.py')


def spread(values):
    return {'median': statistics.median(values), 'min': min(values), 'max': max(values), 'runs': list(values)}


class Central:
    '''The Bumble central: one JSON command per line in, one answer per line out.'''

    def __init__(self):
        self.process = subprocess.Popen([PYTHON, PEER, '--central'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line.startswith('READY '):
            self.stop()
            sys.exit(f'the central did not start: {line!r}')
        self.transport = dict(part.split('=', 1) for part in line.split()[1:] if '=' in part)['transport']

    def send(self, **command):
        self.process.stdin.write(json.dumps(command) + '\n')
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if not answer.get('ok'):
            raise RuntimeError(f'the central failed {command["op"]}: {answer}')
        return answer

    def subscribe(self, name, uuid):
        '''Finds `name`, connects, discovers; subscribes to `uuid` and returns its value handle.'''
        found = self.send(op='scan', name=name)
        self.send(op='connect', address=found['address'], address_type=found['address_type'])
        self.send(op='mtu', mtu=247)
        services = self.send(op='discover')['services']
        handle = next(c['handle'] for s in services for c in s['characteristics'] if c['uuid'] == uuid)
        self.send(op='subscribe', handle=handle)
        return handle

    def stop(self):
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self.process.terminate()
        self.process.wait()


def against_the_peer(bench, count, runs):
    '''Our peripheral notifies the subscribed Bumble central `count` times per run.'''
    ours, received = [], []
    for _ in range(runs):
        central = Central()
        try:
            sender = subprocess.Popen([bench, 'peripheral-peer', '--transport', central.transport, '--count', str(count)],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            ready = sender.stdout.readline()
            if '"ready"' not in ready:
                sys.exit(f'bluejay-bench peripheral-peer did not start: {ready!r}')
            handle = central.subscribe('Bluejay Bench', '2A6E')
            start = time.perf_counter()
            values = central.send(op='values', handle=handle, count=count, timeout=300)['values']
            received.append(len(values) / (time.perf_counter() - start))
            figure = json.loads(sender.stdout.readline())
            sender.wait()
            if len(values) != count or not figure.get('delivered'):
                sys.exit(f'peripheral-peer: {len(values)} of {count} received, {figure}')
            ours.append(figure['notifications_per_s'])
        finally:
            central.stop()
    return {'notifications': count, 'sent_per_s': spread(ours), 'central_received_per_s': spread(received)}


SERVED = {'name': 'Bluejay Serve RSS', 'services': [{'uuid': '181A', 'characteristics': [
    {'uuid': '2A6E', 'properties': ['read', 'notify'], 'value': '0a09', 'notify': {'every': 0.01, 'values': ['0100', '0200']}},
    {'uuid': '2A6F', 'properties': ['read', 'write'], 'value': '32'}]}]}


def serve_rss(bluejay, seconds):
    '''Peak RSS (VmHWM) of `bluejay serve` with the central connected, reading and subscribed
    to a value notified every 10 ms: footprint.py's profile of it (one way of running it).'''
    import footprint
    profile = footprint.serve_rss(bluejay, seconds)
    return {'peak_rss_bytes': profile['vm_hwm_bytes'], 'seconds': seconds, 'notifying': profile['notifying']}


def peripheral(bluejay, bench, runs, count=200000, peer_count=20000, seconds=5):
    in_memory = json.loads(subprocess.run([bench, 'peripheral-notify', '--count', str(count), '--runs', str(runs)],
                                          check=True, capture_output=True, text=True).stdout)
    peer = against_the_peer(bench, peer_count, 3)
    rss = serve_rss(bluejay, seconds)
    print('peripheral: notifications sent')
    print(f'  in memory, 244 B          {in_memory["notifications_per_s"]["median"]:>12,.0f}/s '
          f'({in_memory["notifications_per_cpu_s"]["median"]:,.0f} per CPU s)')
    print(f'  to the Bumble central     {peer["sent_per_s"]["median"]:>12,.0f}/s sent, '
          f'{peer["central_received_per_s"]["median"]:,.0f}/s received by Bumble')
    print(f'  bluejay serve peak RSS    {rss["peak_rss_bytes"] / 1048576:>12.1f} MiB')
    print()
    return {'in_memory': {'payload': 244, 'notifications': count, 'notifications_per_s': in_memory['notifications_per_s'],
                          'notifications_per_cpu_s': in_memory['notifications_per_cpu_s']},
            'against_peer': peer, 'serve': rss}


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--bluejay', required=True)
    parser.add_argument('--bench', required=True)
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--count', type=int, default=200000)
    options = parser.parse_args()
    print(json.dumps(peripheral(options.bluejay, options.bench, options.runs, options.count), indent=2))
