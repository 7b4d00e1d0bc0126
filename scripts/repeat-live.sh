#!/usr/bin/env bash
# Runs the live suite (or the live tests named) N times in a row and prints how many runs passed
# and failed, with each run's duration; optionally with a CPU-bound process running all along.
# Run it under the live lock: flock /tmp/rocesw-live.lock scripts/repeat-live.sh ...
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: scripts/repeat-live.sh [-n N] [--load] [--stall MS:EVERY] [--build DIR] [--lock-each FILE]
                              [--keep-going|--stop] [TEST ...]

Runs `meson test -C DIR --suite live` (or only the TESTs named, e.g. test_live_tm) N times
in a row (default 20) and prints one line per run (pass/FAIL, seconds) and then
"passed P of N, failed F". The log of each failed run is kept as DIR/repeat-live-K.log.

  -n N          runs (default 20)
  --load        keep one CPU-bound process busy (a shell loop) for the whole time, as another
                engineer's build or a busy CI neighbour would
  --stall MS:EVERY
                freeze the build's rocesw-dataplane processes (SIGSTOP, then SIGCONT) for MS
                milliseconds every EVERY milliseconds during each run, as a machine that takes
                the switch's CPU away for that long would; e.g. --stall 300:1500. A lossless
                live test must survive the stall it is sized for (docs/testing.md, "Stalls")
  --build DIR   the build directory (default build)
  --lock-each FILE
                take the live lock FILE (flock) around each run instead of expecting the
                caller to hold it for the whole series, so that other live work on the
                machine can run between two runs of a long series
  --stop        stop at the first failure (default: keep going and count)
  -h, --help    this text

Exit status: 0 if every run passed, 1 otherwise. Live tests need root and must hold the live
lock: flock /tmp/rocesw-live.lock scripts/repeat-live.sh -n 20
(or scripts/repeat-live.sh -n 20 --lock-each /tmp/rocesw-live.lock)
USAGE
}
n=20 load=0 stall= build=build stop=0 lock= tests=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n=$2; shift 2 ;;
    --load) load=1; shift ;;
    --stall) stall=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --lock-each) lock=$2; shift 2 ;;
    --stop) stop=1; shift ;;
    --keep-going) stop=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "repeat-live.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
case "$n" in ''|*[!0-9]*) echo "repeat-live.sh: -n wants a number, got '$n'" >&2; exit 2 ;; esac
stall_ms= stall_every=
if [ -n "$stall" ]; then
  if ! [[ $stall =~ ^[0-9]+:[0-9]+$ ]]; then
    echo "repeat-live.sh: --stall wants MS:EVERY in milliseconds, got '$stall'" >&2; exit 2
  fi
  stall_ms=${stall%%:*} stall_every=${stall#*:}
  if [ "$stall_every" -le "$stall_ms" ]; then
    echo "repeat-live.sh: --stall: EVERY ($stall_every ms) must be longer than the stall ($stall_ms ms)" >&2; exit 2
  fi
fi
cd "$(dirname "$0")/.."
[ -f "$build/build.ninja" ] || { echo "repeat-live.sh: no build in $build (./scripts/build.sh $build)" >&2; exit 2; }
loadpid= stallpid=
cleanup() {
  stop_stall  # never leaves a dataplane frozen
  if [ -n "$loadpid" ]; then kill "$loadpid" 2>/dev/null || true; wait "$loadpid" 2>/dev/null || true; fi
}
trap cleanup EXIT
if [ "$load" = 1 ]; then
  # a pure CPU burner: no I/O, never sleeps
  bash -c 'while :; do :; done' &
  loadpid=$!
fi
# --stall: a loop freezing this build's dataplanes, started and stopped around each run (inside
# the live lock, so that it never touches another run's or a benchmark's dataplane)
dp_pattern="^$(cd "$build" && pwd)/rocesw-dataplane "
start_stall() {
  [ -n "$stall" ] || return 0
  bash -c 'while :; do
      pkill -STOP -f "$1"; sleep "$2"; pkill -CONT -f "$1"
      sleep "$3"
    done' stall "$dp_pattern" "$(awk -v m="$stall_ms" 'BEGIN { print m / 1000 }')" \
    "$(awk -v m="$stall_every" -v s="$stall_ms" 'BEGIN { print (m - s) / 1000 }')" &
  stallpid=$!
}
stop_stall() {
  [ -n "$stallpid" ] || return 0
  kill "$stallpid" 2>/dev/null || true
  wait "$stallpid" 2>/dev/null || true
  stallpid=
  pkill -CONT -f "$dp_pattern" 2>/dev/null || true
}
if [ ${#tests[@]} -eq 0 ]; then sel=(--suite live); else sel=("${tests[@]}"); fi
if [ -n "$lock" ]; then exec 9>>"$lock"; fi
pass=0 fail=0 t_all=$(date +%s)
for k in $(seq 1 "$n"); do
  # the duration counts from when the lock is held, not the wait for it
  if [ -n "$lock" ]; then flock 9; fi
  t0=$(date +%s%N)
  start_stall
  if meson test -C "$build" --print-errorlogs --num-processes 1 "${sel[@]}" > "$build/repeat-live-run.log" 2>&1 9>&-; then
    pass=$((pass + 1)) verdict=pass
  else
    fail=$((fail + 1)) verdict=FAIL
    cp "$build/repeat-live-run.log" "$build/repeat-live-$k.log"
  fi
  stop_stall
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ -n "$lock" ]; then flock -u 9; fi
  printf 'run %d/%d: %s %d.%d s%s\n' "$k" "$n" "$verdict" $((ms / 1000)) $((ms % 1000 / 100)) \
    "$([ "$verdict" = FAIL ] && echo " (log: $build/repeat-live-$k.log)")"
  if [ "$verdict" = FAIL ] && [ "$stop" = 1 ]; then break; fi
done
echo "passed $pass of $((pass + fail)), failed $fail$([ "$load" = 1 ] && echo ' (with a CPU-bound load)')$([ -n "$stall" ] && echo " (dataplanes stalled $stall_ms ms every $stall_every ms)"), $(( $(date +%s) - t_all )) s in all"
[ "$fail" = 0 ]
