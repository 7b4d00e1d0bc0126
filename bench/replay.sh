#!/usr/bin/env bash
# Replay throughput: `rocesw replay` of one capture of 2^20 RoCEv2 packets (rocesw gen incast,
# RoCE MTU 256) through one switch (bench/replay.yaml), against a plain libpcap read-and-write
# of the same file (`tcpdump -r IN -w OUT`) in the same run, ROUNDS times alternating; reports
# packet-hops per second of each and the median ratio. Wall time of whole commands (rocesw's
# includes DPDK set-up). Also the packet-hop rate of a ring AllReduce on config/zone-2stage.yaml,
# open loop (rocesw gen captures) and closed loop (--collective: RC transport, step dependencies).
# Then a zone-size series: zones from scripts/gen_zone.py (RACKSxHOSTSxCTSWS, default 4x2x2,
# 32x16x16 and 192x16x16: 6, 48 and 208 switches) each replaying a closed-loop ring AllReduce over
# one host per rack (ZONE_RING_SIZE bytes, default 384M, 96M and 24M: a few million hops each),
# captures off: set-up CPU time and the event loop's (what the run says under
# ROCESW_REPLAY_STATS=1), switch-hops per CPU second of the event loop, CPU ns per hop and its
# ratio to the smallest zone's, peak RSS (/usr/bin/time -v); the median of ZONE_ROUNDS runs
# (default 3); the largest zone again with the heap on 4 KiB pages, again
# with the smallest zone's traffic (its ring: as many ranks, four times the bytes), the zone's
# own cost, and under rings over ZONE_RANKS of its racks (default 16 48 96; as many bytes in all
# as its own ring), what the cost per hop does as more flows are in flight at once.
# Last, the comparison with ns-3.37 (bench/replay_ns3.sh with ROUNDS; its ZONES are NS3_ZONES),
# when Debian's libns3-dev is installed (scripts/setup-bench-ns3.sh), else a line saying so; and
# the MPI replay's 2-rank speed-up (bench/replay_ranks.sh) when rocesw-replay-mpi is built.
# Usage: bench/replay.sh [ROUNDS | --zones-only]    (default 3; needs ~1.1 GB in /dev/shm, else
# /tmp); ZONES="4x2x2 32x16x16" picks the series. Runs unattended (no terminal needed).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0
fi
zones_only=0
if [[ ${1:-} == --zones-only ]]; then zones_only=1; shift; fi
rounds=${1:-3}
b=${BENCH_BUILD:-build}
./scripts/build.sh "$b" >/dev/null
# on tmpfs when it has room, so disk write-back does not time both programs at random
base=/tmp
if [[ -d /dev/shm ]] && (( $(df --output=avail -k /dev/shm | tail -1) > 3000000 )); then base=/dev/shm; fi
work=$(mktemp -d "$base/rocesw-replaybench.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
zone_series() {
  local rounds=${ZONE_ROUNDS:-3}
  echo "zone-size series (closed-loop ring over one host per rack, captures off; CPU time of the"
  echo "event loop, which the run says under ROCESW_REPLAY_STATS=1: neither its set-up nor its"
  echo "outputs, nor a busy machine's other work; median of $rounds rounds, the range in brackets,"
  echo "each round running every row in turn, and each ratio the median of the rounds' ratios, so"
  echo "a machine whose speed drifts moves both sides of a ratio alike; the heap on transparent"
  echo "huge pages unless marked 4K):"
  local zs=(${ZONES:-4x2x2 32x16x16 192x16x16})
  local last=${zs[${#zs[@]}-1]}
  # last, the largest zone under the smallest zone's traffic (its ring: as many ranks, the same
  # pattern for longer), which tells what the zone's size costs a hop apart from its traffic's,
  # then under rings over ZONE_RANKS of its racks
  local sweep=() n z rows=$work/zone-rows
  for n in ${ZONE_RANKS-16 48 96}; do sweep+=("$last@$n"); done
  : >"$rows"
  for z in "${zs[@]}" "$last/4K" "$last@${zs[0]}" "${sweep[@]}"; do
    local heap=1 zz=${z%/4K} tz key kind=zone
    [[ $z == */4K ]] && heap=0 kind=4K
    zz=${zz%@*} tz=${z#*@} tz=${tz%/4K} key=$heap.${tz}
    IFS=x read -r racks hosts ctsws <<<"$zz"
    local d=$work/zone-$zz
    [[ -d $d ]] || /usr/bin/python3 scripts/gen_zone.py --racks "$racks" --hosts "$hosts" \
      --ctsws "$ctsws" --out "$d" >/dev/null
    # enough traffic for a few million hops in every zone: the ring's bytes per rank shrink as
    # ranks grow (ZONE_RING_SIZE overrides)
    case $tz in 4x2x2) size=384M ;; 32x16x16) size=96M ;; *) size=24M ;; esac
    size=${ZONE_RING_SIZE:-$size}
    if [[ $tz =~ ^[0-9]+$ ]]; then
      # a ring over N of the largest zone's racks: its own ring's bytes in all, shared by N
      local own=${ZONE_RING_SIZE:-24M}
      size=$((${own%M} * ${last%%x*} / tz))M kind=ranks
    elif [[ $z == *@* ]]; then
      # the largest zone under the smallest's ring: four times as long, for enough hops to time
      size=$((${size%M} * 4))M kind=traffic
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$zz" "$d" "$key" "$size" "${tz%%x*}" "$kind" \
      "$heap" >>"$rows"
  done
  local k label d key size ranks kind heap
  for k in $(seq "$rounds"); do
    while IFS=$'\t' read -r label d key size ranks kind heap; do
      ROCESW_REPLAY_STATS=1 ROCESW_HUGE_HEAP=$heap /usr/bin/time -v -o "$d/time.$key.$k" \
        ./"$b"/rocesw replay --config "$d/zone.yaml" --collective "ring,size=$size,ranks=$ranks" \
        --captures none --sample-ns 0 --quiet --out "$d/run.$key" </dev/null >/dev/null \
        2>"$d/stats.$key.$k"
    done <"$rows"
  done
  /usr/bin/python3 - "$rows" "$rounds" <<'PY'
import json, re, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
rounds = int(sys.argv[2])
print(f"{'zone':<12} {'switches':>8} {'ranks':>6} {'size':>7} {'setup_cpu_s':>12} "
      f"{'switch_hops':>11} {'run_cpu_s':>9} {'Mhops_per_s':>11} {'ns_per_hop':>16} {'peak_MB':>8}")
first = rows[0][0]
per_hop = []  # each row's ns a hop, round by round
for label, d, key, size, ranks, kind, heap in rows:
    s = json.load(open(f"{d}/run.{key}/summary.json"))
    assert s["conservation"]["holds"] and s["collective"]["complete"], d
    hops = sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"])
    runs, setups, rss = [], [], 0
    for k in range(1, rounds + 1):
        t = open(f"{d}/time.{key}.{k}").read()
        rss = max(rss, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)[1]))
        st = open(f"{d}/stats.{key}.{k}").read()
        setup = float(re.search(r"replay: set-up ([\d.]+) s of CPU", st)[1])
        end = float(re.search(r"replay: event loop ends at ([\d.]+) s of CPU", st)[1])
        runs.append(end - setup)
        setups.append(setup)
    per_hop.append([r / hops * 1e9 for r in runs])
    run = statistics.median(runs)
    ns = f"{run / hops * 1e9:.0f} [{min(runs) / hops * 1e9:.0f}-{max(runs) / hops * 1e9:.0f}]"
    name = label + ("/4K" if heap == "0" else "")
    print(f"{name:<12} {len(s['switches']):8} {ranks:>6} {size:>7} "
          f"{statistics.median(setups):12.2f} {hops:11} {run:9.2f} {hops / run / 1e6:11.3f} "
          f"{ns:>16} {rss / 1024:8.0f}")
    if len(per_hop) == 1:
        continue
    def ratio(ref, me=per_hop[-1]):  # the median of the rounds' own ratios
        return statistics.median(a / b for a, b in zip(me, ref))
    if kind == "zone":
        print(f"  cost per hop {label} / {first}: {ratio(per_hop[0]):.2f}x (goal: within 1.5x)")
    elif kind == "4K":
        print(f"  {label} with the heap on 4 KiB pages (ROCESW_HUGE_HEAP=0): "
              f"{ratio(per_hop[-2]):.2f}x the cost per hop")
    elif kind == "traffic":
        print(f"  {label} with the traffic of {first} (a ring over {ranks} ranks): "
              f"{ratio(per_hop[0]):.2f}x the cost per hop of {first}")
    else:
        print(f"  {label} under a ring over {ranks} ranks: {ratio(per_hop[0]):.2f}x the cost per "
              f"hop of {first}")
PY
}
if (( zones_only )); then zone_series; exit 0; fi
./"$b"/rocesw gen --pattern incast --hosts 2 --root 1 --message 268435456 --mtu 256 \
  --out "$work/gen" >/dev/null
in=$work/gen/h0.pcap
n=$(/usr/bin/python3 -c "import sys; from scapy.utils import RawPcapReader
print(sum(1 for _ in RawPcapReader(sys.argv[1])))" "$in")
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
zone_series
if pkg-config --exists ns3-point-to-point 2>/dev/null; then
  if [[ -n ${NS3_ZONES:-} ]]; then ZONES=$NS3_ZONES bench/replay_ns3.sh "$rounds"
  else env -u ZONES bench/replay_ns3.sh "$rounds"; fi
else
  echo "against ns-3: not run (no libns3-dev; scripts/setup-bench-ns3.sh installs it)"
fi
BENCH_BUILD=$b bench/replay_ranks.sh "$rounds"
