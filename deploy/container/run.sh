#!/usr/bin/env bash
# Runs the SprayNIC image with podman, with what a DPDK NIC needs and nothing more (./spraynic container):
#   deploy/container/run.sh [OPTIONS] [--] SPRAYNIC_ARGS...      e.g. -- nic --config net_af_packet -p iface=eth1 ...
# Always (but the user, see --user): user spraynic (10001), every capability dropped but CAP_NET_RAW (packet sockets: af_packet,
# pcap, mlx5 raw queues) and CAP_NET_ADMIN (promiscuous mode, tap, flow rules, XDP programs), no new
# privileges, a read-only root file system (tmpfs /tmp; /dev/shm holds the counters and IPC files).
# Options:
#   --name NAME        the container's name (default: spraynic-<pid>)
#   --network NET      podman's --network (default: host, where the host's interfaces are; none for the demo)
#   --hugepages        mount /dev/hugepages (hugetlbfs) for presets that run from hugepages (no_huge = false)
#   --vfio GROUP       a vfio-pci NIC: its group device /dev/vfio/GROUP and /dev/vfio/vfio, and no limit
#                      on locked memory (vfio pins DMA memory); repeat per NIC
#   --ipc-dir DIR      share the NIC's IPC directory with applications of the host (mounted at
#                      /dev/shm/spraynic-spraynic; DIR must be owned by the container's user, mode 0700, or
#                      0750 of the group the NIC's --ipc-group names)
#   --user UID:GID     default 10001:10001. 0:10001 runs the NIC as the Kubernetes DaemonSet does: root, so that
#                      runtimes that keep a non-root user's added capabilities out of its effective set still
#                      give it these two, serving the applications of group spraynic (nic --ipc-group spraynic)
#   --detach           run in the background (podman run -d) and print the container's id
#   --keep             keep the container when it exits (no --rm), for its logs and exit code; podman rm it after
#   --image IMAGE      default: localhost/spraynic:<project version> (deploy/container/build-image.sh)
#   --dry-run          print the podman command instead of running it
# The image is built by: ./spraynic image.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$repo/pom.xml" | head -1)
image="localhost/spraynic:$version"
name="spraynic-$$"
user=10001:10001
network=host
detach=()
remove=(--rm)
dry_run=no
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --network) network=$2; shift 2 ;;
    --hugepages) extra+=(--mount type=bind,source=/dev/hugepages,destination=/dev/hugepages); shift ;;
    --vfio)
      [[ "$2" =~ ^(noiommu-)?[0-9]+$ ]] || { echo "run.sh: --vfio $2: give a vfio group number (ls /dev/vfio)" >&2; exit 2; }
      extra+=(--device "/dev/vfio/$2")
      [[ " ${extra[*]} " == *" /dev/vfio/vfio "* ]] || extra+=(--device /dev/vfio/vfio --ulimit memlock=-1:-1)
      shift 2 ;;
    --ipc-dir)
      # a comma would end source= and start another mount option (a second bind, rw where it should not be)
      [[ "$2" == /* && "$2" != *,* ]] || { echo "run.sh: --ipc-dir $2: give an absolute path without commas" >&2; exit 2; }
      extra+=(--mount "type=bind,source=$2,destination=/dev/shm/spraynic-spraynic"); shift 2 ;;
    --user)
      [[ "$2" =~ ^[0-9]+:[0-9]+$ ]] || { echo "run.sh: --user $2: give UID:GID in numbers" >&2; exit 2; }
      user=$2; shift 2 ;;
    --detach) detach=(--detach); shift ;;
    --keep) remove=(); shift ;;
    --image) image=$2; shift 2 ;;
    --dry-run) dry_run=yes; shift ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option $1 (see the head of $0)" >&2; exit 2 ;;
    *) break ;;
  esac
done

runtime=()
# crun (podman's default) refuses cgroup v1 with cgroup v2 controllers beside it ("hybrid"); runc copes.
if [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ] && command -v runc >/dev/null 2>&1; then
  runtime=(--runtime runc)
fi
# Where root lacks CAP_SYS_RESOURCE (some VMs), podman cannot raise the open-files and processes limits to
# its defaults: keep them at what this shell has.
if (( (0x$(sed -n 's/^CapEff:\s*//p' /proc/self/status) >> 24 & 1) == 0 )); then
  extra+=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
fi

command=(podman "${runtime[@]}" run "${remove[@]}" "${detach[@]}" --name "$name" --network "$network"
  --user "$user" --cap-drop all --cap-add CAP_NET_RAW --cap-add CAP_NET_ADMIN
  --security-opt no-new-privileges --read-only --shm-size 256m
  "${extra[@]}" "$image" "$@")
if [ "$dry_run" = yes ]; then
  printf '%q ' "${command[@]}"; echo
else
  exec "${command[@]}"
fi
