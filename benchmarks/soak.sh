#!/usr/bin/env bash
# The soak (off CI): hostile and lossy traffic through two live NICs on DPDK net_ring pairs while a legitimate
# connection carries verified transfers; one line per round with frames, refusals by reason, transfers verified,
# heap, direct and resident memory. Usage: benchmarks/soak.sh [totalFrames [roundFrames [lossPercent [transferBytes]]]]
# (defaults 10^8, 10^6, 1 %, 4 MiB). Builds the datapath's test classes first.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../deploy/setup-env.sh
. "$HOME_DIR/deploy/setup-env.sh"
spraynic_require_jdk
spraynic_require_dpdk
cd "$HOME_DIR"
./mvnw -B -q -ntp -pl datapath -am test-compile
CP_FILE=datapath/target/soak.classpath
./mvnw -B -q -ntp -pl datapath dependency:build-classpath -Dmdep.outputFile=target/soak.classpath -Dmdep.includeScope=test >/dev/null
exec "$JAVA" --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -Xmx2g -Dspraynic.home="$HOME_DIR" \
  -cp "datapath/target/test-classes:datapath/target/classes:native-bindings/target/classes:pmd-config/target/classes:$(cat "$CP_FILE")" \
  io.spraynic.datapath.nic.FrameSoak "$@"
