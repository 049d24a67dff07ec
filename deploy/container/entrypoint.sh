#!/bin/sh
# /usr/local/bin/spraynic in the container image: the CLI (demo, nic, stat, health, client, ...), as the
# launcher ./spraynic runs it on a host, with the image's own Java runtime, jars and DPDK shim.
# SPRAYNIC_JAVA_OPTS adds JVM options (e.g. -Xmx512m).
# shellcheck disable=SC2086
exec /opt/spraynic/java/bin/java --enable-native-access=ALL-UNNAMED \
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -XX:-UsePerfData \
  -Dspraynic.shim.path=/opt/spraynic/native/linux-x86_64/libspraynic_shim.so ${SPRAYNIC_JAVA_OPTS:-} \
  -cp '/opt/spraynic/lib/*' io.spraynic.cli.SprayNic "$@"
