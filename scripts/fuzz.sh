#!/usr/bin/env bash
# Coverage-guided fuzzing of every target in tests/fuzz with libFuzzer + ASan + UBSan.
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: scripts/fuzz.sh [--seconds S] [--build DIR] [--jobs J] [TARGET ...]

Builds DIR (default build-fuzz) with clang, -Dfuzzing=true and AddressSanitizer +
UndefinedBehaviorSanitizer, makes the seed corpora (tests/fuzz/make_corpus.py: frames of the
pcap-tests inputs, the shipped configs, one request per control operation) in DIR/corpus, and
runs each TARGET (frame, config, ctl; default all) for S seconds (default 5) with its
dictionary (tests/fuzz/yaml.dict, tests/fuzz/control.dict). New inputs that reach new code are
kept in DIR/corpus/TARGET, so longer runs build on shorter ones. A crash, leak or undefined
behaviour stops the run and leaves the input as DIR/crash-TARGET-*; exit status 1.

  --seconds S   run time per target (default 5; scripts/test.sh uses 5, docs/testing.md
                suggests 3600 for a real campaign)
  --build DIR   build directory (default build-fuzz)
  --jobs J      parallel fuzzing processes per target (default 1)
  -h, --help    this text
USAGE
}
secs=5 dir=build-fuzz jobs=1 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) secs=$2; shift 2 ;;
    --build) dir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    frame|config|ctl) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown target $1 (frame, config, ctl)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(frame config ctl)
cd "$(dirname "$0")/.."
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" -Dwerror=true -Dfuzzing=true -Dns3_mpi=disabled -Db_sanitize=address,undefined \
    -Db_lundef=false -Db_lto=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$dir" > "$dir/ninja.log" 2>&1 || { tail -30 "$dir/ninja.log" >&2; exit 1; }
# the corpus generator runs each case's generator with the normal build's rocesw
[ -x build/rocesw ] || ./scripts/build.sh build
python3 tests/fuzz/make_corpus.py "$dir/corpus" --build build
declare -A dict=([frame]="" [config]=tests/fuzz/yaml.dict [ctl]=tests/fuzz/control.dict)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in "${targets[@]}"; do
  args=(-max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$dir/crash-$t-"
        -max_len=16384 -timeout=10 -rss_limit_mb=4096)
  [ -z "${dict[$t]}" ] || args+=(-dict="${dict[$t]}")
  [ "$jobs" -le 1 ] || args+=(-fork="$jobs")
  echo "fuzz.sh: $t for ${secs} s"
  if ! "$dir/tests/fuzz_$t" "${args[@]}" "$dir/corpus/$t" > "$dir/fuzz-$t.log" 2>&1; then
    tail -40 "$dir/fuzz-$t.log" >&2
    echo "fuzz.sh: $t failed: input in $dir/crash-$t-*, log $dir/fuzz-$t.log" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added|cov:" "$dir/fuzz-$t.log" | tail -3 | sed "s/^/  $t: /"
done
echo "fuzz.sh: ${targets[*]}: no crash, leak or undefined behaviour"
