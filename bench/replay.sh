#!/usr/bin/env bash
# Replay throughput: `rocesw replay` of one capture of 2^20 RoCEv2 packets (rocesw gen incast,
# RoCE MTU 256) through one switch (bench/replay.yaml), against a plain libpcap read-and-write
# of the same file (`tcpdump -r IN -w OUT`) in the same run, ROUNDS times alternating; reports
# packet-hops per second of each and the median ratio. Wall time of whole commands (rocesw's
# includes DPDK set-up). Also the packet-hop rate of a ring AllReduce on config/zone-2stage.yaml,
# open loop (rocesw gen captures) and closed loop (--collective: RC transport, step dependencies).
# Usage: bench/replay.sh [ROUNDS]    (default 3; needs ~1.1 GB in /dev/shm, else /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
rounds=${1:-3}
b=${BENCH_BUILD:-build}
./scripts/build.sh "$b" >/dev/null
# on tmpfs when it has room, so disk write-back does not time both programs at random
base=/tmp
if [[ -d /dev/shm ]] && (( $(df --output=avail -k /dev/shm | tail -1) > 3000000 )); then base=/dev/shm; fi
work=$(mktemp -d "$base/rocesw-replaybench.XXXXXX")
trap 'rm -rf "$work"' EXIT
./"$b"/rocesw gen --pattern incast --hosts 2 --root 1 --message 268435456 --mtu 256 \
  --out "$work/gen" >/dev/null
in=$work/gen/h0.pcap
n=$(/usr/bin/python3 -c "import sys; from scapy.utils import RawPcapReader
print(sum(1 for _ in RawPcapReader(sys.argv[1])))" "$in")
now() { date +%s.%N; }
ratios=()
for r in $(seq "$rounds"); do
  rm -f "$work/copy.pcap"; sync
  t0=$(now); tcpdump -r "$in" -w "$work/copy.pcap" 2>/dev/null; t1=$(now)
  rm -rf "$work/out"; sync
  t2=$(now)
  ./"$b"/rocesw replay --config bench/replay.yaml --in "Ethernet0=$in" --out "$work/out" \
    --sample-ns 0 >/dev/null 2>&1
  t3=$(now)
  out=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['conservation']['transmitted'])" "$work/out/summary.json")
  [[ $out == "$n" ]] || { echo "replay transmitted $out of $n packets" >&2; exit 1; }
  line=$(awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
    cp = n / (b - a); rp = n / (d - c)
    printf "round: tcpdump copy %.2f Mpkt/s (%.2f s), rocesw replay %.2f Mpkt-hops/s (%.2f s), replay/copy time %.2f", cp / 1e6, b - a, rp / 1e6, d - c, (d - c) / (b - a) }')
  echo "$line"
  ratios+=("$(awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN { printf "%.3f", (d - c) / (b - a) }')")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
  printf "median replay time / tcpdump copy time over %d rounds: %.2fx (issue: within 4x, goal 2x)\n", NR, v[int((NR + 1) / 2)] }'
# the zone: every packet crosses 2 to 4 links (host - RTSW - CTSW - RTSW - host)
./"$b"/rocesw gen --pattern ring --hosts 8 --message 16777216 --out "$work/ring" >/dev/null
# set-up alone (6 switch configs compiled, each with its 64 MiB DIR-24-8 table): stop at 1 ns
s0=$(now)
./"$b"/rocesw replay --config config/zone-2stage.yaml --in-dir "$work/ring" --out "$work/zone0" \
  --sample-ns 0 --until 1 >/dev/null 2>&1
s1=$(now)
t0=$(now)
./"$b"/rocesw replay --config config/zone-2stage.yaml --in-dir "$work/ring" --out "$work/zone" \
  --sample-ns 0 >/dev/null 2>&1
t1=$(now)
c0=$(now)
./"$b"/rocesw replay --config config/zone-2stage.yaml --collective ring,size=16M \
  --out "$work/zone-closed" --sample-ns 0 >/dev/null 2>&1
c1=$(now)
hops() { # LABEL SUMMARY T0 T1
/usr/bin/python3 - "$2" "$3" "$4" "$s0" "$s1" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
hops = sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"])
t = float(sys.argv[3]) - float(sys.argv[2])
setup = float(sys.argv[5]) - float(sys.argv[4])
print(f"zone-2stage ring AllReduce, {sys.argv[6]}: {hops} switch hops in {t:.2f} s ({setup:.2f} s "
      f"of it set-up): {hops / (t - setup) / 1e6:.2f} M hops/s after set-up")
PY
}
hops "open loop (captures)" "$work/zone/summary.json" "$t0" "$t1"
hops "closed loop (--collective)" "$work/zone-closed/summary.json" "$c0" "$c1"
