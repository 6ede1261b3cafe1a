"""Resident memory of a running process by cause, from /proc/PID/smaps (Linux).

Samples the process's mappings while it runs and keeps the sample with the most resident
memory, broken down by what the pages are:

  binary      the executable's own pages touched (code and read-only data, and its writable data)
  libraries   the shared libraries' pages (glibc, libstdc++, ...)
  heap        malloc's memory: the main arena ([heap]), the other arenas (64 MiB reservations
              that glibc gives threads), and anonymous mappings of large allocations
  stacks      the main thread's stack and the other threads' (an anonymous mapping right
              above a guard page)
  other       anything else (vdso, vvar, ...)

with the thread count at that sample and the kernel's own high-water mark (VmHWM), which
is what ru_maxrss reports.
"""
import os
import subprocess
import time

HEAP_MAX = 64 << 20  # glibc's HEAP_MAX_SIZE on 64-bit: a non-main arena's reservation


def mappings(pid):
    """[(start, end, perms, path, {field: kB})] of /proc/PID/smaps."""
    result = []
    with open(f'/proc/{pid}/smaps') as smaps:
        current = None
        for line in smaps:
            head = line.split(None, 5)
            if '-' in head[0] and len(head) >= 5 and not head[0].endswith(':'):
                start, end = (int(x, 16) for x in head[0].split('-'))
                current = (start, end, head[1], head[5].strip() if len(head) > 5 else '', {})
                result.append(current)
            elif current is not None and head[0].endswith(':') and len(head) >= 2 and head[1].isdigit():
                current[4][head[0][:-1]] = int(head[1])
    return result


def classify(pid, binary):
    """{cause: bytes resident} for one sample of the process, and its thread count."""
    maps = mappings(pid)
    binary = os.path.realpath(binary)
    causes = {'binary': 0, 'libraries': 0, 'heap': 0, 'stacks': 0, 'other': 0}
    detail = {'binary_code_rodata': 0, 'binary_data': 0, 'heap_main_arena': 0, 'heap_thread_arenas': 0,
              'heap_large_mmaps': 0, 'stacks_main': 0, 'stacks_threads': 0}
    by_end = {m[1]: m for m in maps}
    by_start = {m[0]: m for m in maps}
    for start, end, perms, path, fields in maps:
        rss = fields.get('Rss', 0) * 1024
        if not rss:
            continue
        if path and os.path.realpath(path) == binary:
            causes['binary'] += rss
            detail['binary_data' if 'w' in perms else 'binary_code_rodata'] += rss
        elif path.startswith('/'):
            causes['libraries'] += rss
            library = 'library ' + os.path.basename(path).split('.so')[0]
            detail[library] = detail.get(library, 0) + rss
        elif path == '[heap]':
            causes['heap'] += rss
            detail['heap_main_arena'] += rss
        elif path == '[stack]':
            causes['stacks'] += rss
            detail['stacks_main'] += rss
        elif path == '':
            below, above = by_end.get(start), by_start.get(end)
            if below is not None and below[2].startswith('---') and below[3] == '' and 'w' in perms \
                    and not (start % HEAP_MAX == 0):
                causes['stacks'] += rss          # a thread's stack, above its guard page
                detail['stacks_threads'] += rss
            elif start % HEAP_MAX == 0 or (below is not None and below[0] % HEAP_MAX == 0 and below[3] == ''):
                causes['heap'] += rss            # a thread arena (64 MiB aligned)
                detail['heap_thread_arenas'] += rss
            else:
                causes['heap'] += rss            # a large allocation (mmap'd by malloc) or the runtime's
                detail['heap_large_mmaps'] += rss
        else:
            causes['other'] += rss
    try:
        threads = len(os.listdir(f'/proc/{pid}/task'))
    except OSError:
        threads = 0
    return causes, detail, threads


def resident_binary_pages(pid, binary):
    """Link-time addresses of the binary's pages that are resident (/proc/PID/pagemap), so
    they can be put down to the components a link map places there."""
    binary = os.path.realpath(binary)
    ranges = [(m[0], m[1]) for m in mappings(pid) if m[3] and os.path.realpath(m[3]) == binary]
    if not ranges:
        return []
    bias = min(start for start, _ in ranges)  # PIE: the first segment is linked at 0
    pages = []
    with open(f'/proc/{pid}/pagemap', 'rb') as pagemap:
        for start, end in ranges:
            pagemap.seek(start // 4096 * 8)
            entries = pagemap.read((end - start) // 4096 * 8)
            for index in range(len(entries) // 8):
                if entries[index * 8 + 7] & 0x80:  # bit 63: present
                    pages.append(start - bias + index * 4096)
    return pages


def high_water(pid):
    with open(f'/proc/{pid}/status') as status:
        for line in status:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    return 0


def profile(argv, env=None, interval=0.02):
    """Runs argv to its end; returns the breakdown of its largest sample, the most threads
    seen, VmHWM just before it exited (from the last sample) and ru_maxrss."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    best, most_threads, hwm, pages = None, 0, 0, []
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            causes, detail, threads = classify(proc.pid, argv[0])
            hwm = max(hwm, high_water(proc.pid))
        except (OSError, ValueError, IndexError):
            continue
        most_threads = max(most_threads, threads)
        total = sum(causes.values())
        if best is None or total > best[0]:
            best = (total, causes, detail, threads)
            try:
                pages = resident_binary_pages(proc.pid, argv[0])
            except OSError:
                pass
        time.sleep(interval)
    stderr = proc.stderr.read().decode(errors='replace')
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f'{" ".join(argv)} failed ({status}): {stderr}')
    total, causes, detail, threads = best or (0, {}, {}, 0)
    return {'sampled_peak_bytes': total, 'causes': causes, 'detail': detail, 'threads_at_peak': threads,
            'threads_max': most_threads, 'vm_hwm_bytes': hwm, 'ru_maxrss_bytes': usage.ru_maxrss * 1024,
            'stderr': stderr, 'binary_pages': pages}
