#!/usr/bin/env bash
# How much memory a replay hop works in: the event loop alone under callgrind's cache simulation
# (valgrind --tool=callgrind --cache-sim=yes --toggle-collect=rp_engine_run_one), with the last
# level of cache set to each size in turn (16-way, 64-byte lines), on the zone-size series'
# smallest and largest zones (bench/replay.sh: a closed-loop ring over one host per rack,
# captures off; the largest stopped at 100 us of virtual time). Prints, per size, the reads and
# writes that miss it per switch-hop in each zone. A curve that falls to near zero at some size
# says the hop's working set fits there: where the machine's own L2 sits on that curve is what
# the largest zone's cost per hop pays beyond the smallest's (counts, not time: callgrind models
# neither prefetches nor overlapping misses). Deterministic: the same build gives the same
# figures on any machine. Needs no terminal; runs two simulations at a time.
# With --pages, the same in pages: the simulated caches hold 4 KiB lines, a first level of 64
# (a data TLB) and a last level of each size in turn, in entries (default 2048 4096 8192
# 16384): the misses of the last are walks a second-level TLB of that reach would make.
# Usage: bench/replay_working_set.sh [--pages] [SIZES]   (default "1 2 4 8 16 32" MiB). SMALL
#        and LARGE override the zones (RACKSxHOSTSxCTSWS, default 4x2x2 and 192x16x16);
#        BENCH_BUILD the build directory (default build-prof: debugoptimized, for callgrind's
#        source lines).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
pages=0
if [[ ${1:-} == --pages ]]; then pages=1; shift; fi
if (( pages )); then sizes=${1:-2048 4096 8192 16384}; else sizes=${1:-1 2 4 8 16 32}; fi
b=${BENCH_BUILD:-build-prof}
./scripts/build.sh "$b" --buildtype=debugoptimized >/dev/null
command -v valgrind >/dev/null || { echo "replay_working_set.sh: needs valgrind" >&2; exit 1; }
base=/tmp
if [[ -d /dev/shm ]] && (( $(df --output=avail -k /dev/shm | tail -1) > 1000000 )); then
  base=/dev/shm
fi
work=$(mktemp -d "$base/rocesw-workingset.XXXXXX")
trap 'rm -rf "$work"' EXIT
small=${SMALL:-4x2x2} large=${LARGE:-192x16x16}

zone() { # RACKSxHOSTSxCTSWS -> its directory
  local d=$work/zone-$1 racks hosts ctsws
  IFS=x read -r racks hosts ctsws <<<"$1"
  [[ -d $d ]] || /usr/bin/python3 scripts/gen_zone.py --racks "$racks" --hosts "$hosts" \
    --ctsws "$ctsws" --out "$d" >/dev/null
  echo "$d"
}

# one simulation: ZONE TAG SIZE ARGS... -> $work/TAG.{cg,out}
sim() {
  local d=$1 tag=$2 ll caches
  if (( pages )); then
    ll=$(($3 * 4096)) caches=(--D1=262144,64,4096 --LL="$ll,16,4096")
  else
    ll=$(($3 << 20)) caches=(--LL="$ll,16,64")
  fi
  shift 3
  valgrind --tool=callgrind --cache-sim=yes "${caches[@]}" --toggle-collect=rp_engine_run_one \
    --callgrind-out-file="$work/$tag.cg" ./"$b"/rocesw replay --config "$d/zone.yaml" \
    --captures none --sample-ns 0 --quiet --out "$work/$tag.out" "$@" \
    </dev/null >/dev/null 2>"$work/$tag.log" && return 0
  echo "replay_working_set.sh: the run with a last level of $ll bytes failed:" >&2
  tail -5 "$work/$tag.log" >&2
  return 1
}

ds=$(zone "$small") dl=$(zone "$large")
rs=${small%%x*} rl=${large%%x*}
# two at a time, the long ones first
jobs=()
for size in $sizes; do jobs+=("l $size"); done
for size in $sizes; do jobs+=("s $size"); done
running=0
for j in "${jobs[@]}"; do
  read -r kind size <<<"$j"
  if (( running == 2 )); then wait -n; running=1; fi
  if [[ $kind == l ]]; then
    sim "$dl" "l$size" "$size" --collective "ring,size=24M,ranks=$rl" --until 100000 &
  else
    sim "$ds" "s$size" "$size" --collective "ring,size=24M,ranks=$rs" &
  fi
  running=$((running + 1))
done
while (( running > 0 )); do wait -n; running=$((running - 1)); done

/usr/bin/python3 - "$work" "$small" "$large" "$pages" $sizes <<'PY'
import json, re, sys
work, small, large, pages, sizes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", \
    sys.argv[5:]

def hops(tag):
    s = json.load(open(f"{work}/{tag}.out/summary.json"))
    return sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"])

def misses(tag):
    text = open(f"{work}/{tag}.cg").read()
    ev = re.search(r"^events: (.*)$", text, re.M)[1].split()
    tot = [int(x) for x in re.search(r"^totals: (.*)$", text, re.M)[1].split()]
    tot += [0] * (len(ev) - len(tot))
    v = dict(zip(ev, tot))
    return v["Ir"], v["DLmr"], v["DLmw"]

if pages:
    print("second-level TLB misses per switch-hop of the replay event loop (callgrind: 4 KiB lines,"
          " a 64-entry first level, a 16-way last level)")
else:
    print("last-level misses per switch-hop of the replay event loop (callgrind, 16-way,"
          " 64 B lines)")
print(f"  {small}: ring over {small.split('x')[0]} ranks, whole run; "
      f"{large}: ring over {large.split('x')[0]} ranks, first 100 us")
unit = "entries" if pages else "LL_MiB"
print(f"{unit:>7} {'zone':>10} {'hops':>9} {'instr/hop':>10} {'read_miss/hop':>14} "
      f"{'write_miss/hop':>15}")
for size in sizes:
    for z, tag in ((small, f"s{size}"), (large, f"l{size}")):
        h = hops(tag)
        ir, mr, mw = misses(tag)
        print(f"{size:>7} {z:>10} {h:9} {ir / h:10.1f} {mr / h:14.2f} {mw / h:15.2f}")
PY
