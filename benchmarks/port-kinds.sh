#!/usr/bin/env bash
# One run, one JVM: the same verified spray and RoCEv2 transfers over net_ring, net_af_packet on a veth pair,
# net_af_xdp on another veth pair and kernel UDP sockets on loopback, IPv4 and IPv6 (PortKindComparison), with each kind's
# median goodput and its ratio to net_ring. Usage: benchmarks/port-kinds.sh [bytes [rounds [kinds]]] (defaults 16 MiB,
# 3, all; kinds a comma-separated subset, e.g. net_af_packet,udp,udp6).
# Needs root: it creates the two veth pairs (names with this shell's pid) and removes them on exit.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../deploy/setup-env.sh
. "$HOME_DIR/deploy/setup-env.sh"
spraynic_require_jdk
spraynic_require_dpdk
ID=$(( $$ % 100000 ))
AFP_A=spkpa$ID AFP_B=spkpb$ID AFX_A=spkxa$ID AFX_B=spkxb$ID
cleanup() { ip link del "$AFP_A" 2>/dev/null || true; ip link del "$AFX_A" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
for pair in "$AFP_A:$AFP_B" "$AFX_A:$AFX_B"; do  # not set --: that would replace the script's arguments
  ip link add "${pair%%:*}" type veth peer name "${pair##*:}"
  for end in "${pair%%:*}" "${pair##*:}"; do
    sysctl -qw "net.ipv6.conf.$end.disable_ipv6=1"
    ip link set "$end" up
  done
done
cd "$HOME_DIR"
./mvnw -B -q -ntp -pl benchmarks -am compile
CP_FILE=benchmarks/target/port-kinds.classpath
./mvnw -B -q -ntp -pl benchmarks dependency:build-classpath -Dmdep.outputFile=target/port-kinds.classpath >/dev/null
"$JAVA" --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -Xmx2g \
  -Dspraynic.home="$HOME_DIR" \
  -cp "benchmarks/target/classes:datapath/target/classes:native-bindings/target/classes:pmd-config/target/classes:$(cat "$CP_FILE")" \
  io.spraynic.bench.e2e.PortKindComparison "$AFP_A" "$AFP_B" "$AFX_A" "$AFX_B" "$@"
