#!/usr/bin/env bash
# ci/softroce-vm.sh COMMAND...: runs COMMAND where a Soft-RoCE (rdma_rxe)
# device exists, and exits with COMMAND's status.
#
# Why a VM: the CI host's kernel has no RDMA support and cannot load modules
# (see shared/softroce-notes.md). Debian's own kernel, booted under qemu with
# software emulation, can: this script downloads its package once
# (apt-get download + dpkg -x, never installed on the host), caches it under
# the build directory, builds a tiny busybox initramfs that loads the 9p and
# RDMA modules, shares the host's root file system into the guest over
# virtfs, adds rxe0 and runs COMMAND chrooted into the host's tree, in the
# caller's directory and environment.
#
# rxe0 sits on a dummy netdev (locus0, link-local address $LOCUS_VM_ADDRESS,
# exported to COMMAND as LOCUS_VERBS_ADDRESS), not on lo: rdma_cm treats
# 127.0.0.0/8 as loopback and cannot resolve a route over lo on this kernel
# (rdma_resolve_route: ENODEV), while rxe loops traffic between its own
# addresses internally. Like lo, the dummy device delivers nothing outside
# the guest, and the guest has no network interface (-nic none).
#
# Where the host itself has a usable RDMA device (hardware, or rdma_rxe that
# can be loaded), COMMAND runs natively instead (LOCUS_VM=force skips that).
#
# Exit status: COMMAND's; 77 when no device exists and no VM can be started
# (the caller treats that as "skipped"); 1 when the VM itself failed.
# Environment: LOCUS_VM_CACHE (default build/softroce-vm), LOCUS_VM_TIMEOUT
# (seconds, default 900), LOCUS_VM_MEMORY (default 2G), LOCUS_VM_ADDRESS
# (default 169.254.78.1), LOCUS_VM=force|native.
set -euo pipefail

readonly SKIP=77
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${LOCUS_VM_CACHE:-$repo/build/softroce-vm}
timeout_s=${LOCUS_VM_TIMEOUT:-900}
memory=${LOCUS_VM_MEMORY:-2G}
vm_address=${LOCUS_VM_ADDRESS:-169.254.78.1}

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi

say() { echo "softroce-vm: $*" >&2; }

# --- native path -----------------------------------------------------------

host_has_device() {
  [ -d /sys/class/infiniband ] && [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]
}

# Adds rxe on a dummy netdev of the host (as in the guest, below) when the
# host kernel allows it. The caller removes both afterwards.
try_host_rxe() {
  [ "$(id -u)" -eq 0 ] || return 1
  command -v rdma >/dev/null || return 1
  modprobe rdma_rxe 2>/dev/null && modprobe rdma_ucm 2>/dev/null && modprobe dummy 2>/dev/null || return 1
  ip link add locus0 type dummy 2>/dev/null || return 1
  if ip addr add "$vm_address/24" dev locus0 && ip link set locus0 up &&
     rdma link add locus_rxe0 type rxe netdev locus0 2>/dev/null; then
    return 0
  fi
  ip link delete locus0 2>/dev/null || true
  return 1
}

if [ "${LOCUS_VM:-}" != force ]; then
  if host_has_device; then
    say "host has an RDMA device ($(ls /sys/class/infiniband | tr '\n' ' ')); running natively"
    exec "$@"
  fi
  if try_host_rxe; then
    say "added locus_rxe0 on a dummy netdev of the host ($vm_address); running natively"
    trap 'rdma link delete locus_rxe0 2>/dev/null; ip link delete locus0 2>/dev/null || true' EXIT
    export LOCUS_VERBS_ADDRESS=$vm_address
    set +e
    "$@"
    status=$?
    set -e
    exit $status
  fi
  if [ "${LOCUS_VM:-}" = native ]; then
    say "no RDMA device on the host and LOCUS_VM=native: skipped"
    exit $SKIP
  fi
fi

# --- VM prerequisites --------------------------------------------------------

for tool in qemu-system-x86_64 depmod modprobe dpkg apt-get; do
  if ! command -v "$tool" >/dev/null; then
    say "no RDMA device and no '$tool' to start a VM (ci/install-deps.sh installs it): skipped"
    exit $SKIP
  fi
done
# busybox-static installs /bin/busybox; the initramfs has no libraries.
busybox_bin=/bin/busybox
if [ ! -x "$busybox_bin" ] || [[ "$(ldd "$busybox_bin" 2>&1 || true)" != *"not a dynamic executable"* ]]; then
  say "no static busybox at $busybox_bin (install busybox-static): skipped"
  exit $SKIP
fi

mkdir -p "$cache"
# One set-up at a time: concurrent runs share the cached kernel and initramfs.
exec 9>"$cache/.setup.lock"
flock 9

# --- the kernel package, downloaded and unpacked once ----------------------

kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

pkg=$(kernel_package || true)
if [ -z "$pkg" ]; then
  # apt's lists may be missing on a fresh machine.
  apt-get update -qq >/dev/null 2>&1 || true
  pkg=$(kernel_package || true)
fi
if [ -z "$pkg" ]; then
  say "cannot find Debian's kernel package (apt-cache depends linux-image-amd64): skipped"
  exit $SKIP
fi
kver=${pkg#linux-image-}
kroot=$cache/kernel-$kver
if [ ! -f "$kroot/.unpacked" ]; then
  say "downloading and unpacking $pkg (once; cached in $kroot)"
  tmp=$(mktemp -d "$cache/download.XXXXXX")
  if ! (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1); then
    rm -rf "$tmp"
    say "apt-get download $pkg failed: skipped"
    exit $SKIP
  fi
  rm -rf "$kroot"
  dpkg -x "$tmp"/"$pkg"_*.deb "$kroot"
  rm -rf "$tmp"
  depmod -b "$kroot" "$kver"
  touch "$kroot/.unpacked"
fi
vmlinuz=$kroot/boot/vmlinuz-$kver
[ -f "$vmlinuz" ] || { say "no $vmlinuz in the unpacked package"; exit 1; }

# --- the initramfs: busybox, the modules in dependency order, /init -------

# crc32_generic first: rxe needs the kernel's crc32 algorithm, and nothing
# declares that as a module dependency.
modules_wanted="crc32_generic virtio_pci 9pnet_virtio 9p dummy rdma_rxe ib_uverbs rdma_ucm"
initrd=$cache/initrd-$kver.gz
init_src=$(cat <<'INIT'
#!/bin/busybox sh
# The guest's init: load modules, mount the host's root, run guest.sh in it.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do
  insmod /modules/$m || echo "init: insmod $m failed"
done
ip link set lo up
mkdir -p /host
work=$(sed -n 's/.*locus\.work=\([^ ]*\).*/\1/p' /proc/cmdline)
# The host's tree is cached in the guest (binaries load several times
# faster than uncached); the run's own directory is a second, uncached
# share, so the host sees the command's output as it is written.
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot /host &&
   mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 locuswork "/host$work"; then
  mount -t proc proc /host/proc
  mount -t sysfs sys /host/sys
  mount -t devtmpfs dev /host/dev
  mkdir -p /host/dev/pts /host/dev/shm
  mount -t devpts devpts /host/dev/pts
  mount -t tmpfs shm /host/dev/shm
  chroot /host /bin/bash "$work/guest.sh"
else
  echo "init: cannot mount the host's root file system over 9p"
fi
sync
poweroff -f
INIT
)
stamp=$(printf '%s\n%s\n' "$modules_wanted" "$init_src" | md5sum | cut -c1-12)
if [ ! -f "$initrd" ] || [ "$(cat "$initrd.stamp" 2>/dev/null)" != "$stamp" ]; then
  say "building the initramfs for $kver"
  staging=$(mktemp -d "$cache/initrd.XXXXXX")
  mkdir -p "$staging"/{bin,proc,sys,dev,modules}
  cp "$busybox_bin" "$staging/bin/busybox"
  printf '%s\n' "$init_src" >"$staging/init"
  chmod 755 "$staging/init"
  for m in $modules_wanted; do
    modprobe -d "$kroot" -S "$kver" --show-depends "$m"
  done | awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++' >"$staging/paths"
  : >"$staging/modules/order"
  while read -r path; do
    cp "$path" "$staging/modules/"
    basename "$path" >>"$staging/modules/order"
  done <"$staging/paths"
  rm "$staging/paths"
  (cd "$staging" && find . | "$busybox_bin" cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd"
  echo "$stamp" >"$initrd.stamp"
  rm -rf "$staging"
fi
flock -u 9

# --- one run -----------------------------------------------------------------

work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
{
  echo "#!/bin/bash"
  echo "# Generated by ci/softroce-vm.sh: runs inside the guest, chrooted into the host's tree."
  # The caller's environment, less what belongs to the host's session.
  export -p | grep -vE '^declare -x (HOSTNAME|TERM|SHLVL|OLDPWD|PWD|_|SSH_[A-Z_]*|DISPLAY|TMUX[A-Z_]*)='
  echo "work=$(printf '%q' "$work")"
  echo "export LOCUS_VERBS_ADDRESS=$(printf '%q' "$vm_address")"
  echo "cd $(printf '%q' "$PWD") || exit 1"
  printf 'cmd=('
  printf '%q ' "$@"
  printf ')\n'
  cat <<'GUEST'
# The command's output goes to a file on the shared tree, which the host
# streams: the serial console would mix it with the kernel's messages.
exec >>"$work/out" 2>&1
if ! { ip link add locus0 type dummy && ip addr add "$LOCUS_VERBS_ADDRESS/24" dev locus0 &&
       ip link set locus0 up && rdma link add rxe0 type rxe netdev locus0; }; then
  echo "softroce-vm: setting up rxe0 on locus0 ($LOCUS_VERBS_ADDRESS) failed"
fi
"${cmd[@]}" </dev/null
status=$?
if [ $status -ne 0 ]; then
  echo "softroce-vm: command exited with $status; guest diagnostics follow"
  echo "--- rdma link"; rdma link
  echo "--- ibv_devinfo -v"; ibv_devinfo -v
  echo "--- guest kernel log (last 150 lines)"; dmesg | tail -n 150
fi
echo $status >"$work/status"
GUEST
} >"$work/guest.sh"
: >"$work/out"

# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer
# check can fail and panic the guest before anything runs; a guest that
# stops before running the command is booted once more.
for attempt in 1 2; do
  say "booting $kver under qemu (TCG, $memory, timeout ${timeout_s}s, attempt $attempt): $*"
  set +e
  timeout "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -m "$memory" -smp 2 \
    -display none -monitor none -serial "file:$work/console.log" -no-reboot -nic none \
    -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check locus.work=$work" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,multidevs=remap \
    -virtfs local,path="$work",mount_tag=locuswork,security_model=passthrough \
    </dev/null >"$work/qemu.log" 2>&1 &
  qemu_pid=$!
  tail -n +1 -f --pid=$qemu_pid "$work/out"
  wait $qemu_pid
  qemu_status=$?
  set -e
  if [ -f "$work/status" ] || [ -s "$work/out" ] || [ $qemu_status -eq 124 ]; then break; fi
  say "the guest stopped before running the command (qemu exit $qemu_status); console:"
  tail -n 20 "$work/console.log" >&2 || true
done

if [ -f "$work/status" ]; then
  status=$(cat "$work/status")
  say "guest command exited with $status"
  exit "$status"
fi
if [ $qemu_status -eq 124 ]; then
  say "the VM did not finish within ${timeout_s}s"
else
  say "the VM stopped without a result (qemu exit $qemu_status)"
fi
echo "--- qemu" >&2; tail -n 20 "$work/qemu.log" >&2 || true
echo "--- guest console (last 80 lines)" >&2; tail -n 80 "$work/console.log" >&2 || true
exit 1
