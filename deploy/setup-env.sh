# shellcheck shell=bash
# Shared set-up for ./spraynic and .ci/run: find a JDK, make sure DPDK (and the test tools) are
# installed, build when needed. Every failure is one sentence saying what to do.

SPRAYNIC_MIN_JAVA=25
SPRAYNIC_DEBIAN_PACKAGES=(dpdk libdpdk-dev pkg-config gcc make)
SPRAYNIC_TEST_PACKAGES=(tshark python3 python3-scapy iproute2 nftables procps systemd prometheus)

spraynic_fail() {
  echo "spraynic: $*" >&2
  exit 1
}

# The Java feature version of a java binary, or 0.
spraynic_java_version() {
  local version
  version=$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  echo "${version:-0}"
}

# Sets JAVA and JAVA_HOME to a JDK >= SPRAYNIC_MIN_JAVA: JAVA_HOME first, then /usr/lib/jvm.
spraynic_require_jdk() {
  local candidate
  for candidate in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/*; do
    if [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] &&
       [ "$(spraynic_java_version "$candidate/bin/java")" -ge "$SPRAYNIC_MIN_JAVA" ] 2>/dev/null; then
      export JAVA_HOME="$candidate"
      JAVA="$candidate/bin/java"
      return 0
    fi
  done
  spraynic_fail "no JDK $SPRAYNIC_MIN_JAVA or newer found (looked at JAVA_HOME=${JAVA_HOME:-unset} and /usr/lib/jvm); install one (e.g. Temurin 25) and set JAVA_HOME to it."
}

spraynic_apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    spraynic_fail "$1 is missing; install it with: sudo apt-get install -y ${*:2}"
  fi
  echo "spraynic: installing ${*:2} (Debian packages) ..." >&2
  if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${@:2}" >/tmp/spraynic-apt.log 2>&1 ||
         { apt-get update -q >>/tmp/spraynic-apt.log 2>&1 &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${@:2}" >>/tmp/spraynic-apt.log 2>&1; }; }; then
    spraynic_fail "could not install ${*:2} (see /tmp/spraynic-apt.log); install them with: apt-get install -y ${*:2}"
  fi
}

# DPDK's runtime and development files (the build compiles the shim against them), and the C compiler and make
# that build the shim, the benchmarks' C loops and libspraynic.
spraynic_require_dpdk() {
  if ! pkg-config --exists libdpdk 2>/dev/null || ! ldconfig -p | grep 'librte_eal\.so' >/dev/null ||
     ! command -v cc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    spraynic_apt_install "DPDK" "${SPRAYNIC_DEBIAN_PACKAGES[@]}"
  fi
  pkg-config --exists libdpdk 2>/dev/null || spraynic_fail "DPDK is still not found by pkg-config libdpdk after installing it."
}

# Tools the tests drive: tshark (Wireshark's dissector checks our frames, and runs the spray Lua dissector of
# tools/decoders), python3 (the kernel side of the tap and veth tests) with python3-scapy (the RoCEv2 and spray
# vectors, the independent spray decoder of tools/decoders), ip and tc (network namespaces, TBF), nft and sysctl
# (the Linux ECMP lab in deploy/lab: drops and CE marks per link, multipath hashing), systemd-analyze and systemd-sysusers
# (the service unit's checks; Debian's systemd package, present on a full Debian 12 install but not in
# minimal container images, and usable without systemd running), prometheus (scrapes spraynic nic
# --metrics), the container tools and kubectl (deploy/container, deploy/kubernetes), and a font for the experiment plots (headless Java still draws text with fontconfig fonts).
spraynic_require_test_tools() {
  local missing=()
  command -v tshark >/dev/null 2>&1 || missing+=(tshark)
  [ -x /usr/bin/python3 ] || missing+=(python3)
  /usr/bin/python3 -c 'import scapy' >/dev/null 2>&1 || missing+=(python3-scapy)
  { command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1; } || missing+=(iproute2)
  command -v nft >/dev/null 2>&1 || missing+=(nftables)
  command -v sysctl >/dev/null 2>&1 || missing+=(procps)
  { command -v systemd-analyze >/dev/null 2>&1 && command -v systemd-sysusers >/dev/null 2>&1; } || missing+=(systemd)
  { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list 2>/dev/null | head -1)" ]; } || missing+=(fontconfig fonts-dejavu-core)
  if [ ${#missing[@]} -gt 0 ]; then
    spraynic_apt_install "test tools (${missing[*]})" "${missing[@]}"
  fi
  # without its recommends (node exporter, smartmontools, ...): 35 packages become 12
  if ! command -v prometheus >/dev/null 2>&1; then
    spraynic_apt_install "the Prometheus server" --no-install-recommends prometheus
  fi
  spraynic_require_container_tools
  # kubectl renders deploy/kubernetes (kustomize) in the manifests' test; Debian's is old (1.20, kustomize
  # v2), so only one that is missing is installed, and the manifests use what both versions know.
  if ! command -v kubectl >/dev/null 2>&1; then
    spraynic_apt_install "kubectl" --no-install-recommends kubernetes-client
  fi
}

# What builds and runs the container image (deploy/container): mmdebstrap and umoci build it, podman runs
# it, with runc beside crun (crun refuses hosts with cgroup v1 and v2 controllers at once).
spraynic_require_container_tools() {
  local missing=()
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  command -v umoci >/dev/null 2>&1 || missing+=(umoci)
  command -v podman >/dev/null 2>&1 || missing+=(podman)
  { command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ]; } || missing+=(runc)
  if [ ${#missing[@]} -gt 0 ]; then
    spraynic_apt_install "container tools (${missing[*]})" --no-install-recommends "${missing[@]}"
  fi
}

# Builds (without tests) when the launcher's jars are missing or any source is newer.
spraynic_build() {
  local jar="$SPRAYNIC_HOME/cli/target/spraynic-cli.jar"
  if [ "${1:-}" != force ] && [ -f "$jar" ] && [ -x "$SPRAYNIC_HOME/benchmarks/target/native/spraynic-rawloop" ] &&
     [ -z "$(find "$SPRAYNIC_HOME" -path "$SPRAYNIC_HOME/.git" -prune -o \
              \( -name pom.xml -o -path '*/src/*' \) -newer "$jar" -print -quit 2>/dev/null)" ]; then
    return 0
  fi
  echo "spraynic: building (first run or sources changed) ..." >&2
  (cd "$SPRAYNIC_HOME" && ./mvnw -q -B -ntp install -Dmaven.test.skip=true >/tmp/spraynic-build.log 2>&1) ||
    { tail -40 /tmp/spraynic-build.log >&2; spraynic_fail "the build failed (full log: /tmp/spraynic-build.log)."; }
}
