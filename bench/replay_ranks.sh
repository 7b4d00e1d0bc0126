#!/usr/bin/env bash
# The 2-rank speed-up of the MPI replay (rocesw-replay-mpi, docs/replay-parallel.md): zones from
# scripts/gen_zone.py (RANK_ZONES, default 32x16x16 and 192x16x16: 48 and 208 switches) each
# replaying, open loop, the captures of a ring AllReduce over one host per rack (rocesw gen,
# RANK_RING_SIZE bytes, default 4M and 1M), captures off. For each zone: the wall time of the
# sequential `rocesw replay`, of `mpirun -np 1` and of `mpirun -np 2` in both of ns-3's
# synchronisation modes (set-up included, the median of ROUNDS runs, default 3), the speed-up
# sequential / 2 ranks, that the summaries are identical, and where each rank's time went
# (ROCESW_MPI_STATS=1: replay steps, frames crossing ranks, the messages carrying them and their
# cost, synchronisations and their cost, time on a core), then the load average again.
# Usage: bench/replay_ranks.sh [ROUNDS]. Needs meson -Dns3_mpi (scripts/setup-ns3-mpi.sh); says
# so and exits 0 otherwise. Runs unattended.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
rounds=${1:-3}
b=${BENCH_BUILD:-build}
if [[ ! -x $b/rocesw-replay-mpi ]]; then
  echo "2-rank speed-up: not run (no $b/rocesw-replay-mpi: scripts/setup-ns3-mpi.sh, then meson -Dns3_mpi=enabled)"
  exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# a rank waiting at a window gives its core away instead of spinning: on cores shared with other
# work this halved the waiting here (set 0 to measure spinning)
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
base=/tmp
if [[ -d /dev/shm ]] && (( $(df --output=avail -k /dev/shm | tail -1) > 3000000 )); then base=/dev/shm; fi
work=$(mktemp -d "$base/rocesw-rankbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "2-rank speed-up (open-loop ring over one host per rack, captures off, wall time with set-up;"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, MPI yield when idle: $OMPI_MCA_mpi_yield_when_idle):"
printf '%-10s %8s %6s %9s %9s %9s %9s %9s %9s\n' zone switches size seq_s np1_s np2_win_s \
  np2_null_s speedup_w speedup_n
for z in ${RANK_ZONES:-32x16x16 192x16x16}; do
  IFS=x read -r racks hosts ctsws <<<"$z"
  d=$work/zone-$z
  /usr/bin/python3 scripts/gen_zone.py --racks "$racks" --hosts "$hosts" --ctsws "$ctsws" \
    --out "$d" >/dev/null
  case $z in 32x16x16) size=4M ;; *) size=1M ;; esac
  size=${RANK_RING_SIZE:-$size}
  bytes=$(numfmt --from=iec "$size")
  ./"$b"/rocesw gen --pattern ring --hosts "$racks" --message "$bytes" --out "$d/gen" >/dev/null
  args=(--config "$d/zone.yaml" --in-dir "$d/gen" --captures none --sample-ns 0 --quiet)
  declare -A times=()
  for r in $(seq "$rounds"); do
    for mode in seq np1 win null; do
      out=$d/out-$mode
      rm -rf "$out"
      t0=$(now)
      case $mode in
        seq) ./"$b"/rocesw replay "${args[@]}" --out "$out" >/dev/null 2>&1 ;;
        np1) mpirun -np 1 ./"$b"/rocesw-replay-mpi "${args[@]}" --out "$out" >/dev/null 2>&1 ;;
        win) ROCESW_MPI_STATS=1 mpirun -np 2 ./"$b"/rocesw-replay-mpi "${args[@]}" --out "$out" \
               >/dev/null 2>"$d/stats-win.txt" ;;
        null) ROCESW_MPI_STATS=1 mpirun -np 2 ./"$b"/rocesw-replay-mpi --sync null-messages \
               "${args[@]}" --out "$out" >/dev/null 2>"$d/stats-null.txt" ;;
      esac
      t1=$(now)
      times[$mode]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') "
    done
    for mode in np1 win null; do
      cmp -s "$d/out-seq/summary.json" "$d/out-$mode/summary.json" ||
        { echo "$z: summary.json of $mode differs from the sequential run's" >&2; exit 1; }
    done
  done
  m() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }
  s=$(m seq) n1=$(m np1) w=$(m win) n=$(m null)
  awk -v z="$z" -v sw="$((racks + ctsws))" -v sz="$size" -v s="$s" -v a="$n1" -v w="$w" -v n="$n" \
    'BEGIN { printf "%-10s %8d %6s %9.2f %9.2f %9.2f %9.2f %8.2fx %8.2fx\n", z, sw, sz, s, a, w, n, s / w, s / n }'
  sed 's/^/  window: /' "$d/stats-win.txt" | grep 'rank' || true
  sed 's/^/  null messages: /' "$d/stats-null.txt" | grep 'rank' || true
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
