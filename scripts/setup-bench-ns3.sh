#!/usr/bin/env bash
# Installs what bench/replay_ns3.sh needs beyond scripts/setup.sh (run as root): Debian's ns-3.37
# libraries and headers. Kept out of setup.sh so that the normal set-up stays as it is; CI runs
# no benches. Idempotent: installs only packages that are missing.
set -euo pipefail
# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
PKGS=(
  libns3-dev    # ns-3.37 (GPL-2.0-only): the bench's ns-3 program links it, rocesw never does
  libgsl-dev    # Debian's ns3-core.pc names libgsl.so, which only the -dev package provides
  g++ pkg-config
)
apt_install_missing setup-bench-ns3.sh "${PKGS[@]}"
