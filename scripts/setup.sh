#!/usr/bin/env bash
# Installs what rocesw needs to build and test on Debian 12 (run as root). Idempotent: installs
# only packages that are missing.
set -euo pipefail
# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"

PKGS=(
  build-essential meson ninja-build pkg-config
  libdpdk-dev dpdk-dev            # DPDK 22.11 headers/libs; dpdk-dev ships dpdk-testpmd, dpdk-telemetry.py
  libbpf-dev libxdp-dev           # DPDK's af_xdp ports; rocesw send (AF_XDP socket, XDP program)
  clang llvm linux-libc-dev       # rocesw send's XDP program: clang -target bpf, kernel UAPI headers
  libcmocka-dev libpcap-dev libyaml-dev libjansson-dev zlib1g-dev
  libmicrohttpd-dev libsystemd-dev # roceswd: /metrics server, sd_notify
  libcap-dev                      # the dataplane's privilege drop (--user): capabilities kept
  libacl1-dev                     # its control socket's read-only group (a POSIX ACL entry)
  prometheus                      # promtool checks roceswd's metrics in the live test
  python3 python3-scapy python3-yaml tshark tcpdump iproute2 procps ethtool util-linux
  iputils-ping                    # ping across the lab and to the switch (test_live_arp)
  chromium                        # the page tests open every HTML page in headless chromium
  libclang-rt-14-dev              # libFuzzer builds of tests/fuzz (scripts/fuzz.sh; clang is above)
  openvswitch-switch-dpdk         # bench/forward.sh's third contender (OVS-DPDK 3.1, its own private instance)
)
# node and npm drive chromium in the page tests; a machine may already have them from another
# packaging of Node.js (whose nodejs conflicts with Debian's npm): take Debian's only when absent
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)

# tshark asks whether non-root users may capture; answer for it
APT_DEBCONF="wireshark-common wireshark-common/install-setuid boolean false"
apt_install_missing setup.sh "${PKGS[@]}"

# npm packages, each pinned by its folder's package-lock.json (installed only when missing):
# uPlot (control/labs/report), the chart library the build inlines into every page; and
# playwright-core (tests/pages), which drives /usr/bin/chromium in the page tests and downloads
# no browser.
root="$(cd "$(dirname "$0")/.." && pwd)"
for dep in control/labs/report:uplot tests/pages:playwright-core; do
  dir="$root/${dep%%:*}"
  if [ ! -d "$dir/node_modules/${dep#*:}" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
  fi
done

# rocesw-replay-mpi (meson -Dns3_mpi, auto): Open MPI and ns-3's mpi module, built once from
# Debian's ns3 source package into /var/cache/rocesw/ns3-mpi (about 75 s on 2 cores the first
# time, nothing after). Optional: the rest of rocesw builds and tests without it.
if [ "$(id -u)" -eq 0 ] && [ -z "${ROCESW_NO_NS3_MPI:-}" ]; then
  "$root/scripts/setup-ns3-mpi.sh" >/dev/null ||
    echo "setup.sh: scripts/setup-ns3-mpi.sh failed: rocesw-replay-mpi will not be built" >&2
fi
