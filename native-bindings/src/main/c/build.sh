#!/usr/bin/env bash
# Builds libspraynic_shim.so against the system DPDK (pkg-config libdpdk) into $1.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
if ! pkg-config --exists libdpdk 2>/dev/null; then
  echo "error: DPDK development files not found (pkg-config libdpdk). Install them: apt-get install -y dpdk libdpdk-dev pkg-config" >&2
  exit 1
fi
mkdir -p "$out"
# --no-as-needed keeps every DPDK library as a dependency of the shim, so that once the JVM loads
# the shim, SymbolLookup.loaderLookup() resolves the rte_* symbols the jextract bindings call.
${CC:-cc} -O3 -g -fPIC -shared -Wall -Wextra -Werror \
  $(pkg-config --cflags libdpdk) \
  -o "$out/libspraynic_shim.so" "$here/spraynic_shim.c" \
  -Wl,--no-as-needed $(pkg-config --libs libdpdk | sed 's/-Wl,--as-needed//g') -lrte_net_ring
echo "built $out/libspraynic_shim.so"
