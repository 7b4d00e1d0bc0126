#!/usr/bin/env bash
# One worker forwarding a RoCEv2 mix from net_pcap (infinite_rx) to net_null ports through the
# full ingress pipeline (parse, LPM, E-ECMP hash with UDF, resilient buckets, TTL/MAC rewrite),
# against dpdk-testpmd --forward-mode=macswap on the same vdevs and traffic, in the same run.
# The two alternate for ROUNDS rounds so that a shared host's drifting speed hits both alike;
# the ratio reported is the median of the per-round ratios. Each run lasts until its per-second
# rate is steady (5 periods within 5 %, bench/forward_report.py) or MAX_SECONDS pass; no terminal
# is needed (testpmd forwards with --auto-start and its stdin held open).
# Usage: bench/forward.sh [MAX_SECONDS_PER_RUN] [ROUNDS]    (defaults 60 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
secs=${1:-60}
rounds=${2:-3}
./scripts/build.sh "${BENCH_BUILD:-build}" >/dev/null
work=$(mktemp -d /tmp/rocesw-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
sed "s|@MIX@|$work/mix.pcap|" bench/forward.yaml > "$work/switch.yaml"
eal=(--no-huge -m 2048 --no-pci -l 0-1 --no-shconf --log-level error)

# Runs "$@" in the background, logging to $log, until its rate is steady or $secs pass.
run_until_steady() {
  local kind=$1 log=$2; shift 2
  # stdin held open: testpmd without a terminal otherwise reads EOF as "press enter to exit"
  "$@" > "$log" 2>&1 < <(sleep $((secs + 30))) &
  local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null && (( SECONDS - start < secs )); do
    sleep 1
    /usr/bin/python3 bench/forward_report.py --steady "$kind" "$log" && break
  done
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

for r in $(seq 1 "$rounds"); do
  run_until_steady testpmd "$work/testpmd.$r.log" dpdk-testpmd "${eal[@]}" --file-prefix bench-tp \
    --vdev "net_pcap0,rx_pcap=$work/mix.pcap,infinite_rx=1" --vdev "net_null1,no-rx=1" \
    -- --forward-mode=macswap --auto-start --stats-period 1 --total-num-mbufs=32768
  run_until_steady rocesw "$work/rocesw.$r.log" ./"${BENCH_BUILD:-build}"/rocesw-dataplane \
    "${eal[@]}" --file-prefix bench-rsw -- --config "$work/switch.yaml" --stats-period 1
done

/usr/bin/python3 bench/forward_report.py "$work" "$rounds"
