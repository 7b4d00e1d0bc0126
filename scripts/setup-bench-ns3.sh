#!/usr/bin/env bash
# Installs what bench/replay_ns3.sh needs beyond scripts/setup.sh (run as root): Debian's ns-3.37
# libraries and headers. Kept out of setup.sh so that the normal set-up stays as it is; CI runs
# no benches. Idempotent: installs only packages that are missing.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
PKGS=(
  libns3-dev    # ns-3.37 (GPL-2.0-only): the bench's ns-3 program links it, rocesw never does
  libgsl-dev    # Debian's ns3-core.pc names libgsl.so, which only the -dev package provides
  g++ pkg-config
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-bench-ns3.sh: missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  echo "setup-bench-ns3.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
