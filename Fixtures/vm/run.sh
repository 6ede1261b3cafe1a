#!/usr/bin/env bash
# Runs one command inside a Debian-kernel virtual machine and exits with its status.
#
#   Fixtures/vm/run.sh COMMAND [ARG...]
#
# The guest sees the host's whole filesystem read-only with a throwaway writable layer, so
# binaries built on the host run there as they are; the command runs as root, in the current
# directory, with the current PATH and the variables named below. Its output streams here.
#
#   VM_CACHE    where the kernel and initramfs are kept (default: .vmcache in the repo)
#   VM_RW       space-separated host directories the guest may write to (artifacts)
#   VM_TIMEOUT  seconds before the machine is killed (default 300); exit status 124 then
#   VM_BOOT_TIMEOUT  seconds the guest has to come up (its init reaching the command;
#               default 240): past it the machine is killed and booted again, up to
#               VM_BOOT_TRIES times (default 2), then the run fails (exit 124) naming the
#               boot as the cause, with the kernel console. Under TCG on a loaded host a
#               guest has been seen to stall in boot for good (RCU stalls, timers not
#               firing); a second boot is cheap, a silent 20-minute wait is not
#   VM_ENV      names of further variables to pass into the guest
#   VM_ACCEL    kvm or tcg; default: kvm only when /dev/kvm opens and the CPU shows vmx/svm
#   VM_CPU      the CPU model QEMU emulates under tcg (default max)
#   VM_SMP      the guest's CPUs (default: 1 under tcg, see below; 2 under kvm)
#   VM_CONSOLE  a file to keep the guest's kernel console in (otherwise shown only on failure)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] || { echo "usage: run.sh COMMAND [ARG...]" >&2; exit 64; }
cache=${VM_CACHE:-$repo/.vmcache}
release=$("$here/assets.sh" "$cache")
assets=$cache/$release
timeout=${VM_TIMEOUT:-300}

work=$(mktemp -d /tmp/bluejay-vm.XXXXXX)
qemu=""
cleanup() {
    [ -n "$qemu" ] && kill "$qemu" 2>/dev/null || true
    [ -n "${VM_CONSOLE:-}" ] && cp "$work/console.log" "$VM_CONSOLE" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/xfer"
: > "$work/xfer/output"

{
    echo "VM_KERNEL_RELEASE=$release"
    echo "VM_MODULES=$assets/root/lib/modules/$release"
    echo "VM_RW='${VM_RW:-}'"
} > "$work/xfer/vm.conf"
{
    echo "export PATH=$(printf %q "$PATH") HOME=/root TERM=dumb LANG=C.UTF-8 BLUEJAY_VM=1"
    for name in ${VM_ENV:-}; do
        [ -n "${!name+set}" ] && echo "export $name=$(printf %q "${!name}")"
    done
    echo "cd $(printf %q "$PWD") || exit 125"
    printf '%q ' "$@"
    echo
} > "$work/xfer/cmd.sh"

# KVM only where it really works: /dev/kvm here can be a PVM "KVM" that cannot run a stock
# kernel (no vmx/svm flag); software emulation is slower but always right.
accel=${VM_ACCEL:-}
if [ -z "$accel" ]; then
    if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accel=kvm; else accel=tcg; fi
fi
# Under TCG, one guest CPU on one host thread (thread=single; QEMU's default, thread=multi,
# gives each vCPU a thread). With -smp 2, thread=multi on this loaded 2-core host a guest once
# stopped for good in boot after "rcu: rcu_preempt kthread timer wakeup didn't happen for N
# jiffies ... Possible timer handling issue on cpu=0": one guest CPU kept its tick (jiffies
# advanced) while cpu 0 ran none of its timers. With a thread per vCPU the host schedules
# each guest CPU on its own, so one can be off the host for seconds while the other spins
# waiting on it (IPIs, TLB flushes, code patching as modules load, boot's expedited RCU grace
# periods), and under TCG the guest has no paravirtual help (steal time, pv spinlocks,
# kvm-clock). With one vCPU none of that exists: when its thread is off the host the whole
# guest waits and sees only time jump; timers fire late, but fire. Not two vCPUs on the one
# thread (QEMU's round-robin): BlueZ's scan then found our advertiser after 16 s and twice
# not in 30 s (0.5-0.7 s with one vCPU, or a thread each). The cost: one host core's worth of
# emulation instead of up to two, and a guest whose Swift cooperative pool is one thread.
# Rejected: -icount (guest time would follow instructions, not the wall clock the bench
# measures with, and it runs slower); nohz=off/highres=off (more wake-ups, no help against a
# vCPU the host does not run); rcupdate.rcu_cpu_stall_* (only silences the report).
# The clock stays: tsc=reliable keeps the TSC (the host's, cheap under TCG) as clocksource
# without the watchdog, which under a loaded TCG can declare it unstable and move timekeeping
# to the HPET (an emulated MMIO read each time); -rtc is only the date read at boot.
case $accel in
    kvm) machine=(-accel kvm -cpu host) smp=${VM_SMP:-2} ;;
    tcg) machine=(-accel tcg,thread=single -cpu "${VM_CPU:-max}") smp=${VM_SMP:-1} ;;
    *) echo "VM_ACCEL must be kvm or tcg" >&2; exit 64 ;;
esac

shares=()
index=0
for dir in ${VM_RW:-}; do
    mkdir -p "$dir"
    shares+=(-fsdev "local,id=rw$index,path=$dir,security_model=none" -device "virtio-9p-pci,fsdev=rw$index,mount_tag=rw$index")
    index=$((index + 1))
done

boot_timeout=${VM_BOOT_TIMEOUT:-240}
boot_tries=${VM_BOOT_TRIES:-2}
# Boots the machine in the background ($qemu) and waits until its init says it is up
# (xfer/ready); returns 1, the machine killed, when it has not within boot_timeout.
boot() {
    rm -f "$work/xfer/ready"
    qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
        -machine q35 -bios /usr/share/qemu/qboot.rom "${machine[@]}" -smp "$smp" -m 1G \
        -kernel "$assets/vmlinux" -initrd "$assets/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 tsc=reliable no_timer_check mitigations=off random.trust_cpu=on loglevel=4" \
        -serial "file:$work/console.log" \
        -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
        -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
        -fsdev "local,id=xfer,path=$work/xfer,security_model=none" -device virtio-9p-pci,fsdev=xfer,mount_tag=xfer \
        "${shares[@]}" -device virtio-rng-pci < /dev/null > "$work/qemu.log" 2>&1 &
    qemu=$!
    local up_by=$((SECONDS + boot_timeout))
    while [ ! -e "$work/xfer/ready" ] && kill -0 "$qemu" 2>/dev/null && [ $SECONDS -lt $up_by ]; do
        sleep 0.2  # polling the guest's marker with a deadline, not waiting out a race
    done
    [ -e "$work/xfer/ready" ] || ! kill -0 "$qemu" 2>/dev/null && return 0
    kill "$qemu"
    wait "$qemu" 2>/dev/null || true
    qemu=""
    return 1
}
try=1
until boot; do
    echo "vm: boot $try of $boot_tries did not come up within ${boot_timeout}s (accel $accel); last of the kernel console:" >&2
    tail -n 15 "$work/console.log" >&2
    if [ $try -ge "$boot_tries" ]; then
        echo "vm: the guest never came up: a boot hang, not the command; giving up after $boot_tries boots" >&2
        exit 124
    fi
    try=$((try + 1))
done
tail -n +1 -f --pid="$qemu" "$work/xfer/output" &
tailer=$!

deadline=$((SECONDS + timeout))
while kill -0 "$qemu" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
    sleep 0.2  # polling the machine's process with a deadline, not waiting out a race
done
status=0
if kill -0 "$qemu" 2>/dev/null; then
    kill "$qemu"
    wait "$qemu" 2>/dev/null || true
    wait "$tailer" 2>/dev/null || true
    echo "vm: timed out after ${timeout}s; kernel console:" >&2
    tail -n 40 "$work/console.log" >&2
    exit 124
fi
wait "$qemu" || status=$?
qemu=""
wait "$tailer" 2>/dev/null || true
if [ ! -s "$work/xfer/rc" ]; then
    echo "vm: the guest stopped without a result (qemu exit $status); qemu and kernel console:" >&2
    cat "$work/qemu.log" >&2
    tail -n 40 "$work/console.log" >&2
    exit 125
fi
rc=$(cat "$work/xfer/rc")
[ "$rc" = 125 ] && { echo "vm: guest set-up failed; kernel console:" >&2; tail -n 40 "$work/console.log" >&2; }
exit "$rc"
