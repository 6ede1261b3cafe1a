#!/usr/bin/env bash
# The guest's kernel and initramfs, built once and cached: Debian's stock
# linux-image-*-amd64 (not -cloud-amd64: it has no bluetooth.ko/hci_vhci.ko), unpacked with
# `apt-get download` + `dpkg-deb -x` so nothing is installed on the host, and a ~2 MB busybox
# initramfs that loads just what the guest needs to mount the host's filesystem.
#
# Usage: Fixtures/vm/assets.sh CACHE_DIR   (prints the kernel release it prepared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: assets.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# One preparation at a time (two make vmtest runs sharing a clone).
exec 9> "$cache/.lock"
flock 9

sudo=$([ "$(id -u)" = 0 ] || echo sudo)
# The kernel release behind the linux-image-amd64 meta package, e.g. 6.1.0-56-amd64.
kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1
}
package=$(kernel_package)
if [ -z "$package" ]; then
    # No package lists yet (a fresh machine whose other packages were all installed).
    $sudo apt-get update -q >&2
    package=$(kernel_package)
fi
[ -n "$package" ] || { echo "vm assets: apt knows no linux-image-amd64 (Debian's stock kernel)" >&2; exit 1; }
release=${package#linux-image-}
dir=$cache/$release
# The initramfs is rebuilt when this script or the guest init changes; the kernel is kept.
stamp=$(cat "$here/assets.sh" "$here/init" | sha256sum | cut -c1-16)
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] && [ -f "$dir/initramfs.cpio.gz" ]; then
    echo "$release"
    exit 0
fi
rm -f "$dir/stamp"
if [ ! -f "$dir/vmlinux" ] || [ ! -f "$dir/root/lib/modules/$release/modules.dep" ]; then
    echo "vm assets: preparing $package in $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir/download"
    # A stale package list can name a kernel the mirror no longer has: refresh once and retry.
    (cd "$dir/download" && apt-get download -q "$package" >&2) ||
        { $sudo apt-get update -q >&2 && package=$(kernel_package) && release=${package#linux-image-} && dir=$cache/$release &&
          mkdir -p "$dir/download" && (cd "$dir/download" && apt-get download -q "$package" >&2); }
    dpkg-deb -x "$dir"/download/*.deb "$dir/root"
    rm -rf "$dir/download"
    # The .deb ships no modules.dep.
    depmod -b "$dir/root" "$release"
    # The uncompressed ELF vmlinux, booted through its PVH entry point: this skips the
    # bzImage's own xz decompressor, which costs seconds under software emulation.
    bzimage=$dir/root/boot/vmlinuz-$release
    offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bzimage" | head -n1 | cut -d: -f1)
    [ -n "$offset" ] || { echo "vm assets: no xz payload in $bzimage" >&2; exit 1; }
    # xz stops at the end of its stream; what follows it is not an error worth failing on.
    dd if="$bzimage" bs=1M iflag=skip_bytes skip="$offset" status=none | xz -dc --single-stream > "$dir/vmlinux.tmp" 2>/dev/null || true
    [ "$(head -c4 "$dir/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || { echo "vm assets: vmlinux extraction failed" >&2; exit 1; }
    mv "$dir/vmlinux.tmp" "$dir/vmlinux"
    rm -rf "$dir/root/boot"
fi

# Initramfs: static busybox, the modules for 9p/overlay/virtio in load order.
initrd=$dir/initrd
rm -rf "$initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,mnt,newroot,lower,upper,xfer}
cp /bin/busybox "$initrd/bin/busybox"
for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$initrd/bin/$applet"
done
: > "$initrd/modules.order"
# Only what mounting the host's filesystem takes. bluetooth and hci_vhci are loaded later by
# init with the full module tree, so the crypto they pull in on demand (ecdh_generic's
# self-test needs the "stdrng" DRBG, which needs hmac/sha512/ctr(aes)) loads too; from here
# the ECDH self-test fails and the kernel's SMP goes without P-256.
for module in virtio_pci 9pnet_virtio 9p overlay virtio_rng; do
    modprobe -d "$dir/root" -S "$release" --show-depends "$module" | sed -n 's/^insmod \([^ ]*\).*/\1/p' |
    while read -r path; do
        relative=${path#"$dir/root"}
        grep -qxF "$relative" "$initrd/modules.order" && continue
        mkdir -p "$initrd$(dirname "$relative")"
        cp "$path" "$initrd$relative"
        echo "$relative" >> "$initrd/modules.order"
    done
done
cp "$here/init" "$initrd/init"
chmod +x "$initrd/init"
(cd "$initrd" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -6) > "$dir/initramfs.cpio.gz.tmp"
mv "$dir/initramfs.cpio.gz.tmp" "$dir/initramfs.cpio.gz"
rm -rf "$initrd"
echo "$stamp" > "$dir/stamp"
echo "$release"
