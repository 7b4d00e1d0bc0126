#!/usr/bin/env bash
# One worker forwarding a RoCEv2 mix from net_pcap (infinite_rx) to net_null ports through the
# full ingress pipeline (parse, LPM, E-ECMP hash with UDF, resilient buckets, TTL/MAC rewrite),
# against dpdk-testpmd --forward-mode=macswap on the same vdevs and traffic, in the same run.
# The two alternate for ROUNDS rounds so that a shared host's drifting speed hits both alike;
# the ratio reported is the median of the per-round ratios.
# Usage: bench/forward.sh [SECONDS_PER_RUN] [ROUNDS]    (defaults 8 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
secs=${1:-8}
rounds=${2:-3}
./scripts/build.sh "${BENCH_BUILD:-build}" >/dev/null
work=$(mktemp -d /tmp/rocesw-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
sed "s|@MIX@|$work/mix.pcap|" bench/forward.yaml > "$work/switch.yaml"
eal=(--no-huge -m 2048 --no-pci -l 0-1 --no-shconf --log-level error)

for r in $(seq 1 "$rounds"); do
  timeout $((secs + 20)) dpdk-testpmd "${eal[@]}" --file-prefix bench-tp \
    --vdev "net_pcap0,rx_pcap=$work/mix.pcap,infinite_rx=1" --vdev "net_null1,no-rx=1" \
    -- --forward-mode=macswap --stats-period 1 --total-num-mbufs=32768 \
    > "$work/testpmd.$r.log" 2>&1 &
  tp=$!
  sleep "$secs"; kill -INT $tp 2>/dev/null || true; wait $tp 2>/dev/null || true
  ./"${BENCH_BUILD:-build}"/rocesw-dataplane "${eal[@]}" --file-prefix bench-rsw -- \
    --config "$work/switch.yaml" --stats-period 1 --duration "$secs" > "$work/rocesw.$r.log" 2>&1
done

/usr/bin/python3 bench/forward_report.py "$work" "$rounds"
