#!/usr/bin/env bash
# Regenerates SprayNIC's DPDK bindings with jextract. Run it when DPDK, the shim header
# (src/main/c/spraynic_shim.h) or symbols.txt changes, then commit the result. The build never
# runs this: it compiles the committed output.
#
# Needs: jextract on the PATH (built locally from openjdk/jextract; never committed) and the
# DPDK development headers (apt-get install -y libdpdk-dev pkg-config).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=$(dirname "$here")
out="$module/src/main/java"
package=io.spraynic.dpdk.generated

if ! command -v jextract >/dev/null 2>&1; then
  echo "error: jextract is not on the PATH. Build it from https://github.com/openjdk/jextract (see native-bindings/README.md) and put its launcher on the PATH." >&2
  exit 1
fi
if ! pkg-config --exists libdpdk 2>/dev/null; then
  echo "error: DPDK headers not found (pkg-config libdpdk). Install them: apt-get install -y libdpdk-dev pkg-config" >&2
  exit 1
fi

# jextract has no -include, so spraynic_dpdk.h includes rte_config.h first itself.
includes=($(pkg-config --cflags-only-I libdpdk) -I "$module/src/main/c")

# 1. The full dump of what the headers offer, kept beside the filter for reference.
jextract --dump-includes "$here/all-symbols.txt" "${includes[@]}" "$here/spraynic_dpdk.h" >/dev/null 2>&1
sed -i "s|$module/||g" "$here/all-symbols.txt"

# 2. The bindings, restricted to symbols.txt. No --library: the symbols resolve through the
#    loader lookup once NativeLibrary has loaded libspraynic_shim.so, which links all of DPDK.
rm -rf "$out/${package//.//}"
mapfile -t filter < <(grep -v '^#' "$here/symbols.txt" | grep -v '^[[:space:]]*$' | tr -s ' ' '\n')
jextract --output "$out" --target-package "$package" --header-class-name Dpdk \
  "${includes[@]}" "${filter[@]}" "$here/spraynic_dpdk.h"

echo "DPDK $(pkg-config --modversion libdpdk) bindings written to $out/${package//.//}"
