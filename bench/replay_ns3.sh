#!/usr/bin/env bash
# rocesw replay against mainline ns-3.37 (Debian's libns3-dev) fed the same frames over the same
# zone, one core each, in the same run. For each zone of ZONES (RACKSxHOSTSxCTSWS from
# scripts/gen_zone.py; default "4x16x16 4x16x4": 64 hosts under 1:1 and 4:1 uplinks), `rocesw gen`
# writes every host's open-loop capture of a ring AllReduce over all hosts (RING_SIZE per rank,
# default 4M: 387,072 switch-hops, 2.1 GB of captures a run). rocesw replays them with
# `--captures none`, with every port and host captured whole (as shipped), and captured as far
# as the first CUT bytes of each frame (default 128, the RoCE headers: `--capture-snaplen`);
# bench/ns3/replay_ns3 sends the same frames at the same times over ns-3 PointToPoint links of
# the same speeds and delays, each switch forwarding a flow out of the port rocesw's replay sent
# it by, and writes every device's departures to a pcap when captured (cut: the same IP bytes,
# ns-3's PPP frames being 12 bytes shorter). Per run: CPU time (user +
# system, /usr/bin/time) less its set-up's (the CPU time each program had spent when its first
# event ran, which each says on stderr: rocesw under ROCESW_REPLAY_STATS=1), and switch-hops per
# CPU second; every run's per-port frame counts must agree between the two. First, a small ring
# checks one frame's departure times at every switch on its path in both against the link model.
# ROUNDS rounds alternate the two; reported: per-round ratios rocesw/ns-3 and their medians.
# Usage: bench/replay_ns3.sh [ROUNDS]    (default 3; ~4 GB in /dev/shm, else /tmp; libns3-dev
# from scripts/setup-bench-ns3.sh). NS3_ARGS adds arguments to ns-3 (e.g.
# --SchedulerType=ns3::HeapScheduler); CUT=N the bytes kept of each frame in the third way;
# KEEP=DIR keeps logs and results. Needs no terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
rounds=${1:-3}
b=${BENCH_BUILD:-build}
./scripts/setup-bench-ns3.sh
./scripts/build.sh "$b" >/dev/null
# the ns-3 program links ns-3 (GPL-2.0-only): built here, never by rocesw's own build
ns3=$b/bench-ns3/replay_ns3
if [[ ! -x $ns3 || bench/ns3/replay_ns3.cc -nt $ns3 ]]; then
  mkdir -p "$(dirname "$ns3")"
  # shellcheck disable=SC2046 # pkg-config's flags are words
  g++ -O2 -std=c++17 -o "$ns3" bench/ns3/replay_ns3.cc \
    $(pkg-config --cflags --libs ns3-point-to-point)
fi
read -ra ns3_args <<<"${NS3_ARGS:-}"
py=/usr/bin/python3
# on tmpfs when it has room, so disk write-back does not time the captured runs at random
base=/tmp
if [[ -d /dev/shm ]] && (( $(df --output=avail -k /dev/shm | tail -1) > 4000000 )); then
  base=/dev/shm
fi
work=$(mktemp -d "$base/rocesw-ns3bench.XXXXXX")
cleanup() {
  if [[ -n ${KEEP:-} ]]; then
    mkdir -p "$KEEP" && (cd "$work" && find . \( -name '*.txt' -o -name '*.log' -o -name '*.json' \
      -o -name '*.counts' -o -name '*.time' \) -exec cp --parents {} "$KEEP" \;) || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# rocesw_run CONFIG CAPTURE_DIR OUT none|all [ARGS...]: OUT.time holds user and system seconds
# and the peak RSS in KB
rocesw_run() {
  local args=(replay --config "$1" --in-dir "$2" --out "$3" --sample-ns 0 --quiet)
  [[ $4 == none ]] && args+=(--captures none)
  [[ $4 == cut ]] && args+=(--capture-snaplen "$cut")
  rm -rf "$3"
  ROCESW_REPLAY_STATS=1 /usr/bin/time -f '%U %S %M' -o "$3.time" ./"$b"/rocesw "${args[@]}" \
    "${@:5}" </dev/null >"$3.log" 2>&1 ||
    { echo "replay_ns3.sh: rocesw failed:" >&2; tail "$3.log" >&2; exit 1; }
}
# ns3_run TOPOLOGY OUT none|tx [ARGS...]: OUT.counts, OUT.time
ns3_run() {
  rm -rf "$2"; mkdir -p "$2"
  /usr/bin/time -f '%U %S %M' -o "$2.time" "$ns3" --topology="$1" --captures="$3" --out="$2" \
    --counts="$2.counts" "${ns3_args[@]}" "${@:4}" </dev/null >"$2.log" 2>&1 ||
    { echo "replay_ns3.sh: ns-3 failed, $2.log:" >&2; tail "$2.log" >&2; exit 1; }
}
# CPU seconds (user + system), system seconds, peak RSS in KB; set-up's CPU seconds, as the run
# said (rocesw's "replay: set-up S s of CPU", ns-3's "ns-3: set-up S s of CPU")
cpu() { tail -1 "$1.time" | awk '{ printf "%.3f", $1 + $2 }'; }
setup() {
  local s
  s=$(sed -n 's/^\(replay\|ns-3\): set-up \([0-9.]*\) s of CPU.*/\2/p' "$1.log")
  [[ -n $s ]] || { echo "replay_ns3.sh: $1.log says no set-up time" >&2; exit 1; }
  echo "$s"
}
sys() { tail -1 "$1.time" | awk '{ printf "%.3f %d", $2, $3 }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs;" \
  "rocesw $(git rev-parse --short HEAD), ns-3 $(pkg-config --modversion ns3-core)"
checked=0
cut=${CUT:-128}
if (( cut < 14 + 12 )); then
  echo "replay_ns3.sh: CUT=$cut cuts into the Ethernet header" >&2; exit 2
fi
declare -A size=([run]=${RING_SIZE:-4M} [check]=1M)
for z in ${ZONES:-4x16x16 4x16x4}; do
  IFS=x read -r racks hosts ctsws <<<"$z"
  d=$work/$z
  mkdir -p "$d"
  $py scripts/gen_zone.py --racks "$racks" --hosts "$hosts" --ctsws "$ctsws" --out "$d/zone" \
    >/dev/null
  zone=$d/zone/zone.yaml
  n=$((racks * hosts))
  for v in check run; do
    ./"$b"/rocesw gen --pattern ring --hosts "$n" --message "$(numfmt --from=iec "${size[$v]}")" \
      --out "$d/gen-$v" >/dev/null
    # the routes: where each flow left each switch in rocesw's own replay of these frames
    rocesw_run "$zone" "$d/gen-$v" "$d/routes-$v" none
    $py bench/ns3/zone_to_ns3.py "$d/routes-$v/summary.json" "$d/gen-$v" "$d/topo-$v.txt"
  done
  if (( !checked )); then
    # the same traffic, the same links, the same times: counts per port, one frame's path
    rocesw_run "$zone" "$d/gen-check" "$d/check-rocesw" all
    ns3_run "$d/topo-check.txt" "$d/check-ns3" tx
    $py bench/ns3/compare.py counts "$d/check-rocesw/summary.json" "$d/check-ns3.counts" >/dev/null
    $py bench/ns3/compare.py first-frame "$zone" "$d/check-rocesw/summary.json" "$d/gen-check" \
      "$d/check-rocesw" "$d/check-ns3"
    rm -rf "$d/check-rocesw" "$d/check-ns3"
    checked=1
  fi
  $py bench/ns3/compare.py workload "$d/routes-run/summary.json" \
    "zone $z, ring AllReduce of ${size[run]} per rank over every host"
  results=$d/results.txt
  : >"$results"
  for r in $(seq "$rounds"); do
    for v in off on cut; do
      cap=none ncap=(none)
      [[ $v == on ]] && cap=all ncap=(tx)
      [[ $v == cut ]] && cap=cut ncap=(tx --snaplen=$((cut - 12)))
      # alternate which simulator goes first, so a drifting machine hits both alike
      order=(rocesw ns3)
      (( r % 2 )) || order=(ns3 rocesw)
      for sim in "${order[@]}"; do
        if [[ $sim == rocesw ]]; then
          rocesw_run "$zone" "$d/gen-run" "$d/rocesw" "$cap"
        else
          ns3_run "$d/topo-run.txt" "$d/ns3" "${ncap[@]}"
        fi
      done
      same=$($py bench/ns3/compare.py counts "$d/rocesw/summary.json" "$d/ns3.counts")
      hops=${same%% *}
      for sim in rocesw ns3; do
        echo "$r $v $sim $hops $(setup "$d/$sim") $(cpu "$d/$sim") $(sys "$d/$sim")" \
          >>"$results"
      done
      # the captures of a run are GBs: only the summary and the counts stay
      cp "$d/rocesw/summary.json" "$d/rocesw-$r-$v.json"
      rm -rf "$d/rocesw" "$d/ns3"
    done
  done
  $py bench/ns3/compare.py report "$results"
  rm -rf "$d"/gen-*
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
