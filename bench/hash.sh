#!/usr/bin/env bash
# Hash-lab throughput: `rocesw hash` hashes the RoCEv2 mix of bench/make_mix.py, already in
# memory, ROUNDS times per policy of config/rtsw.yaml on one core, beside DPDK's rte_hash_crc
# (CRC32C with SSE4.2) over 16 header bytes of the same packets in the same run.
# Usage: bench/hash.sh [ROUNDS]    (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
rounds=${1:-500}
./scripts/build.sh "${BENCH_BUILD:-build}" >/dev/null
work=$(mktemp -d /tmp/rocesw-hashbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
taskset -c 1 ./"${BENCH_BUILD:-build}"/rocesw hash --policy config/rtsw.yaml --pcap "$work/mix.pcap" \
  --bench "$rounds" 2>&1 >/dev/null | grep '^bench'
