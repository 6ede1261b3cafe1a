#!/usr/bin/env python3
"""`make vmbench`'s report: the medians of Fixtures/vm/bench.sh's runs, as bench/vm-results.json
(objects `bluejay` and `bluez`, each with first_value_ms, bonded_first_value_ms,
notifications_per_s, cpu_s_per_10k and peak_rss_bytes: other scripts read these keys), and
the table docs/Benchmarks.md shows in "bluejay against BlueZ, in a VM".

    bench-report.py RUNS.jsonl --output bench/vm-results.json [--accel tcg|kvm]

bonded_resident_first_value_ms (bluejay only, beside the contract's keys): the bonded
reconnection by a bluejay process already up, as BlueZ's daemon is; bonded_first_value_ms is
a new process's (start and controller init included).

process_start_ms, info_ms (bluejay only): what a new process pays before any link, each
waited for to its end: `bluejay bonds --help` (the process's start and argument parsing), and
`bluejay info` (the start, the controller's bring-up, its reads and the close); medians, with
_runs. They split bonded_first_value_ms, whose process starts and brings the controller up too.

threads (bluejay only): the most threads `bluejay listen` had during the flood
(/proc/PID/status, sampled in the guest), the maximum across runs: a bound on what a run
needs, where a median would hide a run that started more. threads_runs has each run's.

retries, retry_reasons (both stacks): tries of a run that failed outside our stack (BlueZ's
tools or daemons, the emulated controllers) and were run again (bench.sh, run_stack), and why.
A failure of bluejay is never retried: it ends the bench.

CPU per 10,000 notifications received by the client:
  bluejay: the bluejay process (utime + stime);
  bluez:   bluetoothd + dbus-daemon + bluetoothctl, plus the kernel threads' time beyond what
           they spend in the bluejay run per notification: that baseline is the emulated
           link's and the peripheral's kernel work (the same in both runs) plus handing HCI
           packets to a user channel; what is beyond it is the kernel's host stack (L2CAP,
           the ATT socket). `whole_kernel_*` keeps every kernel thread in both, for comparison.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone


def median(values):
    return statistics.median(values) if values else None


def per_10k(seconds, received):
    return seconds / received * 10_000 if received else None


def accel_of(given):
    if given:
        return given
    try:
        cpu = open("/proc/cpuinfo").read()
        usable = os.access("/dev/kvm", os.R_OK | os.W_OK) and re.search(r"\b(vmx|svm)\b", cpu)
    except OSError:
        usable = False
    return "kvm" if usable else "tcg"


def summarize(runs):
    bj = [r for r in runs if r["stack"] == "bluejay"]
    bz = [r for r in runs if r["stack"] == "bluez"]
    if not bj or not bz:
        sys.exit("vmbench report: runs of both stacks are needed")
    # The kernel threads' time per notification when nothing but the link, the peripheral
    # and a user channel use the kernel.
    baseline = median([per_10k(r["kernel_threads_s"], r["received"]) for r in bj])

    def stack(rs, processes_cpu, rss, kernel_extra):
        cpu = [processes_cpu(r) + (kernel_extra(r) or 0) for r in rs]
        return {
            "first_value_ms": median([r["first_value_ms"] for r in rs]),
            "bonded_first_value_ms": median([r["bonded_first_value_ms"] for r in rs]),
            "notifications_per_s": median([r["notifications_per_s"] for r in rs]),
            "cpu_s_per_10k": round(median(cpu), 4),
            "peak_rss_bytes": int(median([rss(r) for r in rs])),
            "whole_kernel_cpu_s_per_10k": round(median([processes_cpu(r) + per_10k(r["kernel_threads_s"], r["received"]) for r in rs]), 4),
            "kernel_threads_s_per_10k": round(median([per_10k(r["kernel_threads_s"], r["received"]) for r in rs]), 4),
            "received_in_window": median([r["received"] for r in rs]),
            "sent_by_peripheral": median([r["sent"] for r in rs]),
            "first_value_ms_runs": [r["first_value_ms"] for r in rs],
            "bonded_first_value_ms_runs": [r["bonded_first_value_ms"] for r in rs],
            "notifications_per_s_runs": [r["notifications_per_s"] for r in rs],
            "cpu_s_per_10k_runs": [round(c, 4) for c in cpu],
            "retries": sum(len(r.get("retries", [])) for r in rs),
            "retry_reasons": [f"run {r['run']}, try {t['try']}: {t['reason']}" for r in rs for t in r.get("retries", [])],
        }

    bluejay = stack(bj, lambda r: per_10k(r["cpu_s"]["bluejay"], r["received"]),
                    lambda r: r["peak_rss_bytes"]["bluejay"], lambda r: 0)
    # The bonded reconnection by a bluejay already up (`read --each-line`), as BlueZ's daemon
    # is: beside bonded_first_value_ms (a new process), not instead of it.
    resident = [r["bonded_resident_first_value_ms"] for r in bj if "bonded_resident_first_value_ms" in r]
    if resident:
        bluejay["bonded_resident_first_value_ms"] = median(resident)
        bluejay["bonded_resident_first_value_ms_runs"] = resident
    for key in ("process_start_ms", "info_ms"):
        values = [r[key] for r in bj if key in r]
        if values:
            bluejay[key] = median(values)
            bluejay[key + "_runs"] = values
    # The most threads of `bluejay listen` in the flood: the maximum across runs (see above).
    threads = [r["threads"] for r in bj if "threads" in r]
    if threads:
        bluejay["threads"] = max(threads)
        bluejay["threads_runs"] = threads
    bluez = stack(bz, lambda r: per_10k(r["cpu_s"]["bluetoothd+dbus-daemon+bluetoothctl"], r["received"]),
                  lambda r: sum(r["peak_rss_bytes"].values()),
                  lambda r: max(0.0, per_10k(r["kernel_threads_s"], r["received"]) - baseline))
    for name in ("bluetoothd", "dbus-daemon", "bluetoothctl"):
        bluez.setdefault("peak_rss_bytes_each", {})[name] = int(median([r["peak_rss_bytes"][name] for r in bz]))
    bluez["processes_cpu_s_per_10k"] = round(median([per_10k(r["cpu_s"]["bluetoothd+dbus-daemon+bluetoothctl"], r["received"]) for r in bz]), 4)
    bluez["kernel_host_cpu_s_per_10k"] = round(median([max(0.0, per_10k(r["kernel_threads_s"], r["received"]) - baseline) for r in bz]), 4)
    return bluejay, bluez


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def table(bluejay, bluez):
    daemons = bluez["peak_rss_bytes_each"]["bluetoothd"] + bluez["peak_rss_bytes_each"]["dbus-daemon"]
    rows = [
        ("cold start to first value (ms)", bluejay["first_value_ms"], bluez["first_value_ms"],
         ratio(bluez["first_value_ms"], bluejay["first_value_ms"]), "bluejay ≤ BlueZ",
         bluejay["first_value_ms"] <= bluez["first_value_ms"]),
        ("bonded reconnect to first value (ms): bluejay a new process", bluejay["bonded_first_value_ms"], bluez["bonded_first_value_ms"],
         ratio(bluez["bonded_first_value_ms"], bluejay["bonded_first_value_ms"]), "bluejay ≤ BlueZ",
         bluejay["bonded_first_value_ms"] <= bluez["bonded_first_value_ms"]),
        *([("… bluejay already up, as BlueZ's daemon is (ms)", bluejay["bonded_resident_first_value_ms"], bluez["bonded_first_value_ms"],
            ratio(bluez["bonded_first_value_ms"], bluejay["bonded_resident_first_value_ms"]), "bluejay ≤ BlueZ",
            bluejay["bonded_resident_first_value_ms"] <= bluez["bonded_first_value_ms"])] if "bonded_resident_first_value_ms" in bluejay else []),
        ("notifications received per s", bluejay["notifications_per_s"], bluez["notifications_per_s"],
         ratio(bluejay["notifications_per_s"], bluez["notifications_per_s"]), "", None),
        ("CPU s per 10,000 notifications", bluejay["cpu_s_per_10k"], bluez["cpu_s_per_10k"],
         ratio(bluez["cpu_s_per_10k"], bluejay["cpu_s_per_10k"]), "BlueZ ≥ 10× bluejay (issue 51)",
         bluez["cpu_s_per_10k"] >= 10 * bluejay["cpu_s_per_10k"]),
        ("… every kernel thread counted on both sides", bluejay["whole_kernel_cpu_s_per_10k"], bluez["whole_kernel_cpu_s_per_10k"],
         ratio(bluez["whole_kernel_cpu_s_per_10k"], bluejay["whole_kernel_cpu_s_per_10k"]), "", None),
        ("peak RSS, every process (MB)", bluejay["peak_rss_bytes"] / 1e6, bluez["peak_rss_bytes"] / 1e6,
         ratio(bluez["peak_rss_bytes"], bluejay["peak_rss_bytes"]), "", None),
        ("… BlueZ: bluetoothd + dbus-daemon only (MB)", bluejay["peak_rss_bytes"] / 1e6, daemons / 1e6,
         ratio(daemons, bluejay["peak_rss_bytes"]), "bluejay ≤ these two", bluejay["peak_rss_bytes"] <= daemons),
    ]
    lines = ["| | bluejay | BlueZ | BlueZ ÷ bluejay | goal | met |", "|---|---:|---:|---:|---|---|"]
    for name, a, b, r, goal, met in rows:
        fmt = (lambda v: f"{v:.1f}") if isinstance(a, float) and a < 1000 else (lambda v: f"{v:,.0f}")
        if "CPU" in name or "kernel thread" in name:
            fmt = lambda v: f"{v:.3f}"
        lines.append(f"| {name} | {fmt(a)} | {fmt(b)} | {r}× | {goal} | {'' if met is None else ('yes' if met else '**no**')} |")
    # The throughput ratio is bluejay ÷ BlueZ (higher is better for bluejay); say so.
    rate_line = next(i for i, line in enumerate(lines) if line.startswith("| notifications received"))
    lines[rate_line] = lines[rate_line].replace(f"| {ratio(bluejay['notifications_per_s'], bluez['notifications_per_s'])}× |",
                                f"| {ratio(bluejay['notifications_per_s'], bluez['notifications_per_s'])}× (bluejay ÷ BlueZ) |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs")
    parser.add_argument("--output", required=True)
    parser.add_argument("--accel")
    args = parser.parse_args()
    runs = [json.loads(line) for line in open(args.runs) if line.strip()]
    environment = next((r for r in runs if r.get("stack") == "environment"), {})
    runs = [r for r in runs if r.get("stack") in ("bluejay", "bluez")]
    bluejay, bluez = summarize(runs)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    result = {
        "bluejay": bluejay,
        "bluez": bluez,
        "environment": {**{k: v for k, v in environment.items() if k != "stack"}, "accel": accel_of(args.accel),
                        "commit": commit, "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
                        "runs_per_stack": sum(1 for r in runs if r["stack"] == "bluejay")},
        "runs": runs,
    }
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    env = result["environment"]
    print(f"vmbench ({env['accel']}, {env.get('vcpus', '?')} vCPUs, kernel {env.get('kernel', '?')}, BlueZ {env.get('bluez', '?')}, "
          f"{env['runs_per_stack']} runs each, medians; {args.output}):")
    print(table(bluejay, bluez))
    if "process_start_ms" in bluejay:
        print(f"bluejay, a new process before any link: start {bluejay['process_start_ms']} ms (`bonds --help`), "
              f"start + controller bring-up + close {bluejay['info_ms']} ms (`info`)")
    if "threads" in bluejay:
        print(f"bluejay listen: {bluejay['threads']} threads at most in the flood (runs: {bluejay['threads_runs']})")
    for name, s in (("bluejay", bluejay), ("BlueZ", bluez)):
        if s["retries"]:
            print(f"{name}: tries that failed outside our stack and were run again: {s['retries']}")
            for reason in s["retry_reasons"]:
                print(f"  {reason}")


if __name__ == "__main__":
    main()
