#!/usr/bin/env bash
# bench throughput --threads 1 on 2 MiB hugepages and with --no-huge, at path MTUs 1024 and 4096, alternating
# the two layouts for ROUNDS rounds in one run. Reserves the pages it needs (nr_hugepages + 160, a hugetlbfs of
# its own) and gives them back on exit, also on failure. Needs root. Off CI.
#
#   sudo benchmarks/hugepages-mtu.sh [ROUNDS] [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-2}
out=${2:-/tmp/spraynic-hugepages-mtu}
spraynic=${SPRAYNIC:-./spraynic}
sys=/sys/kernel/mm/hugepages/hugepages-2048kB
original=$(cat $sys/nr_hugepages)
mount_point=/tmp/spraynic-bench-huge-$$
release() {
  umount -l "$mount_point" 2>/dev/null || true
  rmdir "$mount_point" 2>/dev/null || true
  echo "$original" > $sys/nr_hugepages
  echo "released: nr_hugepages $(cat $sys/nr_hugepages)"
}
trap release EXIT
echo $((original + 160)) > $sys/nr_hugepages   # the benchmark's pool (32767 mbufs) and EAL: 105 pages
mkdir -p "$mount_point" "$out"
mount -t hugetlbfs -o pagesize=2M nodev "$mount_point"
echo "reserved: $(cat $sys/free_hugepages) free, hugetlbfs at $mount_point; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for layout in on off; do
    echo "round $round, --hugepages $layout, $(date -u +%T)"
    $spraynic bench throughput --threads 1 --sizes 64,1024,65536 --mtu 1024,4096 --seconds 2 --warmup 1 --json \
      --hugepages "$layout" > "$out/r$round-$layout.json"
  done
done
