#!/usr/bin/env bash
# Prepares a host with a real DPDK-capable NIC for `spraynic nic`: hugepages, the vfio-pci
# driver, and the NIC bound to it. Without --apply it only checks and prints what it would do.
#
#   deploy/prepare-host.sh [--apply] [--hugepages SIZE] [--bind PCI_ADDRESS]... [--iommu-off] [--owner USER]
#
#   --hugepages SIZE   have at least SIZE of 2 MiB hugepages (e.g. 2G; what others reserved is kept) and hugetlbfs
#                      mounted (default 1G); the spraynic
#                      commands' --hugepages auto (their default) then run DPDK from them: the NIC's default
#                      pool takes about 100 MiB, the demo's about 370 MiB
#   --bind BDF         bind a NIC (e.g. 0000:3b:00.0) to vfio-pci; it leaves the kernel's driver
#                      (never do this to the interface you are logged in through)
#   --iommu-off        allow vfio without an IOMMU (enable_unsafe_noiommu_mode; test rigs only)
#   --owner USER       for a NIC that runs as USER (spraynic-nic.service: spraynic): mount a hugetlbfs
#                      only USER may use at /dev/hugepages-USER (pass -p huge_dir=/dev/hugepages-USER)
#                      and hand USER the vfio group device of each bound NIC
#
# Mellanox/NVIDIA mlx5 NICs are bifurcated: they stay on the kernel driver and need no binding
# (use the mlx5-bifurcated preset). Every problem is reported as one line with what to do.
set -euo pipefail

apply=false
hugepages=1G
iommu_off=false
owner=
binds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --apply) apply=true ;;
    --hugepages) hugepages=${2:?--hugepages needs a size, e.g. 2G}; shift ;;
    --bind) binds+=("${2:?--bind needs a PCI address, e.g. 0000:3b:00.0}"); shift ;;
    --iommu-off) iommu_off=true ;;
    --owner) owner=${2:?--owner needs a user name, e.g. spraynic}; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "prepare-host: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

problems=0
say() { echo "prepare-host: $*"; }
problem() { echo "prepare-host: PROBLEM: $*"; problems=$((problems + 1)); }
run() {
  if $apply; then
    say "running: $*"
    "$@"
  else
    say "would run: $*"
  fi
}

# 1. Tools.
for tool in dpdk-hugepages.py dpdk-devbind.py; do
  command -v "$tool" >/dev/null 2>&1 || problem "$tool is missing: apt-get install -y dpdk"
done
if $apply && [ "$(id -u)" -ne 0 ]; then
  problem "--apply needs root: run it with sudo"
fi
if [ -n "$owner" ] && ! id -u "$owner" >/dev/null 2>&1; then
  problem "--owner $owner: no such user (create it: systemd-sysusers deploy/systemd/spraynic.conf)"
fi
[ $problems -eq 0 ] || { say "$problems problem(s); fix them and run again"; exit 1; }

# 2. Hugepages.
if [[ "$hugepages" =~ ^[0-9]+[KMGkmg]?$ ]]; then
  number=$((10#${hugepages%[KMGkmg]})) # 10#: 08G is eight, not a bad octal number
  case "$hugepages" in
    *[Kk]) want_kb=$number ;;
    *[Mm]) want_kb=$((number * 1024)) ;;
    *[Gg]) want_kb=$((number * 1024 * 1024)) ;;
    *) want_kb=$((number / 1024)) ;;
  esac
  want_pages=$(( (want_kb + 2047) / 2048 ))
  have_pages=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null || echo 0)
  say "hugepages: $have_pages of 2 MiB reserved now; want $hugepages ($want_pages)"
  # never --setup: it clears every pool of every page size (another DPDK application's, a VM's 1 GiB pages) and
  # unmounts /dev/hugepages before it reserves; the 2 MiB pool only grows here, and an existing mount is kept
  if [ "$have_pages" -ge "$want_pages" ]; then
    say "hugepages: enough reserved; left as they are"
    run dpdk-hugepages.py --pagesize 2M --mount
  else
    # in whole pages: dpdk-hugepages.py refuses a size that is not a multiple of the page size (1024K, 3M)
    run dpdk-hugepages.py --pagesize 2M --reserve "$((want_pages * 2))M" --mount
  fi
  if [ -n "$owner" ]; then
    # A mount of its own (mode 0700): the NIC's user gets hugepages without /dev/hugepages being
    # opened to everyone, and nobody else sees its files.
    owner_huge_dir="/dev/hugepages-$owner"
    if mountpoint -q "$owner_huge_dir" 2>/dev/null; then
      say "hugepages for $owner: $owner_huge_dir is mounted"
    else
      run mkdir -p "$owner_huge_dir"
      run mount -t hugetlbfs -o "pagesize=2M,uid=$(id -u "$owner"),gid=$(id -g "$owner"),mode=0700" nodev "$owner_huge_dir"
    fi
  fi
else
  problem "--hugepages $hugepages is not a size like 512M or 2G"
fi

# 3. vfio-pci, only when a NIC is to be bound.
if [ ${#binds[@]} -gt 0 ]; then
  if [ -d /sys/kernel/iommu_groups ] && [ -n "$(ls -A /sys/kernel/iommu_groups 2>/dev/null)" ]; then
    say "IOMMU: enabled"
  elif $iommu_off; then
    say "IOMMU: off; vfio will run in unsafe no-IOMMU mode (test rigs only)"
    run sh -c 'echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode'
  else
    problem "no IOMMU groups: enable intel_iommu=on / amd_iommu=on on the kernel command line, or pass --iommu-off on a test rig"
  fi
  run modprobe vfio-pci
  for bdf in "${binds[@]}"; do
    if [ ! -e "/sys/bus/pci/devices/$bdf" ]; then
      problem "no PCI device $bdf (dpdk-devbind.py --status lists them)"
      continue
    fi
    driver=$(basename "$(readlink -f "/sys/bus/pci/devices/$bdf/driver" 2>/dev/null)" 2>/dev/null || true)
    if [ "$driver" = mlx5_core ]; then
      problem "$bdf is an mlx5 NIC: keep it on mlx5_core (bifurcated) and use the mlx5-bifurcated preset"
      continue
    fi
    for net in /sys/bus/pci/devices/"$bdf"/net/*; do
      [ -e "$net" ] || continue
      if ip -o addr show dev "$(basename "$net")" 2>/dev/null | grep -q 'inet'; then
        problem "$bdf ($(basename "$net")) has an IP address: binding it would cut that network off; remove the address first"
      fi
    done
    run dpdk-devbind.py --bind=vfio-pci "$bdf"
    if [ -n "$owner" ]; then
      # vfio creates the group's device (noiommu-N without an IOMMU) root-only when binding.
      group=$(basename "$(readlink -f "/sys/bus/pci/devices/$bdf/iommu_group" 2>/dev/null)" 2>/dev/null || true)
      if $apply; then
        for dev in "/dev/vfio/$group" "/dev/vfio/noiommu-$group"; do
          [ -n "$group" ] && [ -c "$dev" ] && run chown "$owner:" "$dev"
        done
      else
        say "would run: chown $owner: /dev/vfio/${group:-<iommu group of $bdf>}"
      fi
    fi
  done
fi

if [ $problems -gt 0 ]; then
  say "$problems problem(s); fix them and run again"
  exit 1
fi
if $apply; then
  say "done; check with: dpdk-devbind.py --status && dpdk-hugepages.py --show"
else
  say "checks passed; rerun with --apply to make the changes"
fi
