#!/usr/bin/env bash
# Builds the SprayNIC container image from Debian packages and the project's own jars, with no
# registry but Debian's (the apt sources of this machine):
#   1. base layer: Debian bookworm, "essential" variant, plus the DPDK runtime libraries and drivers in
#      deploy/container/packages (mmdebstrap), and the user spraynic (10001:10001); cached under
#      target/container by the hash of that list and of this script, as the slow part (a minute or two);
#   2. app layer: a Java runtime cut by jlink from the JDK that builds the project (only the modules
#      the CLI uses), the CLI's jars (cli/target/spraynic-cli.jar and cli/target/lib), the DPDK shim
#      and /usr/local/bin/spraynic, the entrypoint;
#   3. an OCI image layout at target/container/oci (umoci), tag = the project's version, then, when
#      podman is installed, loaded into its local storage as localhost/spraynic:<version>.
# Usage: deploy/container/build-image.sh [--no-load | --base-only]   (run by ./spraynic image, which builds the jars
# first). Prints the image's name on the last line. Needs root (mmdebstrap's root mode) or user
# namespaces (its unshare mode), and: mmdebstrap, umoci, a JDK >= 25 with jlink (JAVA_HOME).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/target/container"
load=yes
[ "${1:-}" = --no-load ] && load=no

fail() { echo "build-image: $*" >&2; exit 1; }

# The one place the image's name and tag come from (deploy/kubernetes and the tests read them too).
image_name=localhost/spraynic
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$repo/pom.xml" | head -1)
[ -n "$version" ] || fail "cannot read the project version from $repo/pom.xml"
image="$image_name:$version"

for tool in mmdebstrap umoci; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing: apt-get install -y --no-install-recommends $tool"
done
[ -x "${JAVA_HOME:-}/bin/jlink" ] || fail "JAVA_HOME must name a JDK >= 25 with jlink (e.g. /usr/lib/jvm/temurin-25-jdk-amd64)"
mkdir -p "$out"

# 1. Base layer. The apt sources of this machine: the DPDK the shim was compiled against.
# No documentation, manuals or translations (copyright files stay), no perl (only usrmerge needed it, once /usr
# is merged it is not needed); a system user for the NIC, as
# deploy/systemd/spraynic.conf makes on a host, with a fixed id that Kubernetes' runAsUser names.
base_recipe=(--variant=essential --include="$(grep -v -e '^#' -e '^$' "$here/packages" | paste -sd, -)"
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --customize-hook='echo "spraynic:x:10001:10001:SprayNIC:/var/lib/spraynic:/usr/sbin/nologin" >> "$1/etc/passwd"'
  --customize-hook='echo "spraynic:x:10001:" >> "$1/etc/group"'
  --customize-hook='mkdir -p "$1/var/lib/spraynic" && chown 10001:10001 "$1/var/lib/spraynic" && chmod 0750 "$1/var/lib/spraynic"'
  --customize-hook='chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36'
  --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/lib/apt/lists/* "$1"/var/log/*')
base="$out/base-$(printf '%s\n' "${base_recipe[@]}" | sha256sum | cut -c1-16).tar"
if [ ! -f "$base" ]; then
  sources=()
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$file" ] && sources+=("$file")
  done
  [ ${#sources[@]} -gt 0 ] || sources=("deb http://deb.debian.org/debian bookworm main"
    "deb http://deb.debian.org/debian bookworm-updates main" "deb http://deb.debian.org/debian-security bookworm-security main")
  echo "build-image: base layer (Debian bookworm + DPDK runtime), a minute or two ..." >&2
  rm -rf "$out"/base-*.tar
  mmdebstrap --quiet "${base_recipe[@]}" bookworm "${base%.tar}.partial.tar" "${sources[@]}" >&2
  mv "${base%.tar}.partial.tar" "$base"
fi
[ "${1:-}" = --base-only ] && exit 0

# 2. App layer.
cli_jar="$repo/cli/target/spraynic-cli.jar"
[ -f "$cli_jar" ] && [ -d "$repo/cli/target/lib" ] || fail "the CLI is not built: ./spraynic build (or ./mvnw package -DskipTests)"
stage="$out/app"
rm -rf "$stage" "$out/app.tar"
mkdir -p "$stage/opt/spraynic/lib" "$stage/usr/local/bin"
# The modules the CLI needs (jdeps --print-module-deps on its jars, without java.desktop and
# java.compiler, which only the experiment plots and JMH's annotation processing use), plus
# jdk.httpserver for --metrics.
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.management,java.sql,jdk.unsupported,jdk.httpserver \
  --strip-debug --no-header-files --no-man-pages --output "$stage/opt/spraynic/java"
cp "$cli_jar" "$repo"/cli/target/lib/*.jar "$stage/opt/spraynic/lib/"
# The shim from its jar, loaded from the image (-Dspraynic.shim.path): a read-only root file system
# has its /tmp noexec or small, where the jar's copy would be extracted to.
(cd "$stage/opt/spraynic" && "$JAVA_HOME/bin/jar" xf lib/spraynic-native-bindings-*.jar native/linux-x86_64/libspraynic_shim.so)
[ -f "$stage/opt/spraynic/native/linux-x86_64/libspraynic_shim.so" ] || fail "no libspraynic_shim.so in the native-bindings jar"
cp "$here/entrypoint.sh" "$stage/usr/local/bin/spraynic"
chmod 0755 "$stage/usr/local/bin/spraynic"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/app.tar" -C "$stage" .

# 3. The OCI image: both layers, and the configuration podman and Kubernetes start it with.
layout="$out/oci"
rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci raw add-layer --image "$layout:$version" "$base"
umoci raw add-layer --image "$layout:$version" "$out/app.tar"
umoci config --image "$layout:$version" \
  --config.user 10001:10001 --config.workingdir /var/lib/spraynic \
  --config.entrypoint /usr/local/bin/spraynic --config.cmd demo \
  --config.env SPRAYNIC_RUN_DIR=/dev/shm/spraynic --config.env SPRAYNIC_IPC_DIR=/dev/shm/spraynic-spraynic \
  --config.env XDG_RUNTIME_DIR=/tmp \
  --config.stopsignal SIGTERM \
  --config.label org.opencontainers.image.title=spraynic \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.base.name=debian:bookworm
umoci gc --layout "$layout"
echo "build-image: OCI layout $layout, tag $version" >&2

if [ "$load" = yes ] && command -v podman >/dev/null 2>&1; then
  old=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  # podman names an image loaded from a layout directory after the directory's path, and refuses a path with
  # upper-case letters (a checkout under mktemp's /tmp/tmp.AbC...): it loads through a link whose path has none
  link=$(mktemp -u /tmp/spraynic-oci-XXXXXXXX | tr '[:upper:]' '[:lower:]')
  ln -s "$layout" "$link"
  loaded=$(podman load --quiet --input "$link" | sed -n 's/^Loaded image: //p' | tail -1) || true
  rm -f "$link"
  [ -n "$loaded" ] || fail "podman load --input $layout named no image"
  id=$(podman image inspect --format '{{.Id}}' "$loaded")
  podman tag "$id" "$image"
  [ "$loaded" = "$image" ] || podman untag "$id" "$loaded"
  if [ -n "$old" ] && [ "$old" != "$id" ]; then
    podman rmi "$old" >/dev/null 2>&1 || true
  fi
  echo "build-image: loaded into podman as $image" >&2
fi
echo "$image"
