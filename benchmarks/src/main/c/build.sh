#!/usr/bin/env bash
# Builds spraynic-rawloop (the C twin of RawLoop), libspraynic_rawloop.so (the same C loop, which Java loads to
# alternate both languages in one process), libspraynic_rxtwin.so (the C twin of ReceiveTwin, loaded likewise) and
# spraynic-pingpong (of RawPingPong) into $1, linked against the shim
# the native-bindings module built, so both languages go through the same library.
set -euo pipefail
out=${1:?usage: build.sh OUTPUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
shim_src="$here/../../../../native-bindings/src/main/c"
shim_lib="$here/../../../../native-bindings/target/classes/native/linux-x86_64"
if [ ! -f "$shim_lib/libspraynic_shim.so" ]; then
  echo "error: $shim_lib/libspraynic_shim.so is missing; build native-bindings first (./mvnw package)" >&2
  exit 1
fi
shim_lib=$(cd "$shim_lib" && pwd)
mkdir -p "$out"
${CC:-cc} -O3 -g -Wall -Wextra -Werror $(pkg-config --cflags libdpdk) -I "$shim_src" \
  -o "$out/spraynic-rawloop" "$here/raw_loop.c" "$here/raw_loop_core.c" \
  -L "$shim_lib" -Wl,-rpath,"$shim_lib" -lspraynic_shim $(pkg-config --libs libdpdk)
echo "built $out/spraynic-rawloop"
# The same loop as a library, which the Java harness loads to alternate Java and C in one process.
${CC:-cc} -O3 -g -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags libdpdk) -I "$shim_src" \
  -o "$out/libspraynic_rawloop.so" "$here/raw_loop_core.c" \
  -L "$shim_lib" -Wl,-rpath,"$shim_lib" -lspraynic_shim $(pkg-config --libs libdpdk)
echo "built $out/libspraynic_rawloop.so"
# The C receive twin (parse, ICRC, placement) as a library, which the Java receive twin's harness loads likewise.
${CC:-cc} -O3 -g -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags libdpdk) -I "$shim_src" \
  -o "$out/libspraynic_rxtwin.so" "$here/rx_twin.c" \
  -L "$shim_lib" -Wl,-rpath,"$shim_lib" -lspraynic_shim $(pkg-config --libs libdpdk)
echo "built $out/libspraynic_rxtwin.so"
${CC:-cc} -O3 -g -Wall -Wextra -Werror $(pkg-config --cflags libdpdk) -I "$shim_src" \
  -o "$out/spraynic-pingpong" "$here/ping_pong.c" \
  -L "$shim_lib" -Wl,-rpath,"$shim_lib" -lspraynic_shim $(pkg-config --libs libdpdk) -lrte_net_ring -lpthread
echo "built $out/spraynic-pingpong"
