#!/usr/bin/env bash
# Route scale: for each size and family, a generated config (bench/make_routes.py: N static
# routes, IPv4 /24s or IPv6 /64s, next hops alternating between two neighbours) through
#   check-config      rocesw check-config, wall time and peak RSS;
#   dataplane start   rocesw-dataplane on net_null ports until its control socket answers;
#   reload            rocesw reload of the same routes with every 100th moved to the other next
#                     hop (the control socket's reload: compile, diff, one transaction);
#   roceswd reload    roceswd --attach adopting that dataplane, then the config replaced by
#                     rename (inotify): validation in the daemon plus the dataplane's reload,
#                     until roceswd logs "reloaded";
# and prints one table row per run with the load average beside it (a shared machine's noise).
# Usage: bench/routes.sh [SIZES] [FAMILIES]   (defaults "100000 1000000" and "ipv4 ipv6")
# Needs root only for nothing; memory: about 2 GB per million routes in the dataplane.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
sizes=${1:-"100000 1000000"}
families=${2:-"ipv4 ipv6"}
build=${BENCH_BUILD:-build}
./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-routes.XXXXXX)
dp_pid= d_pid=
cleanup() {
  [ -n "$d_pid" ] && kill "$d_pid" 2>/dev/null && wait "$d_pid" 2>/dev/null
  [ -n "$dp_pid" ] && kill -INT "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
hwm_mib() { awk '/^VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
# waits until "$@" succeeds, polling every 0.1 s, for at most $1 seconds
wait_for() {
  local limit=$1; shift
  local t0=$SECONDS
  until "$@" >/dev/null 2>&1; do
    (( SECONDS - t0 < limit )) || { echo "routes.sh: gave up waiting for: $*" >&2; return 1; }
    sleep 0.1
  done
}

reloads_logged() { [ "$(grep -c 'reloaded:' "$work/roceswd.log")" -ge "$1" ]; }

printf '| routes | family | check-config | peak RSS | dataplane start | dataplane RSS | reload (1 %% moved) | dataplane RSS after | roceswd reload | roceswd RSS | load |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for n in $sizes; do
  for fam in $families; do
    cfg=$work/routes.yaml moved=$work/moved.yaml sock=$work/dp.sock
    /usr/bin/python3 bench/make_routes.py "$n" "$cfg" --family "$fam"
    /usr/bin/python3 bench/make_routes.py "$n" "$moved" --family "$fam" --shift 100
    /usr/bin/time -f '%e %M' -o "$work/cc.time" "$build/rocesw" check-config "$cfg" >/dev/null
    read -r cc_s cc_kb < "$work/cc.time"

    # memory for the dataplane: the FIB plus the shadow state and its clone
    mem=$(( 1024 + n / 500 ))
    t0=$(now)
    "$build/rocesw-dataplane" --no-huge -m "$mem" --no-pci -l 0-1 --no-shconf \
      --file-prefix "routes$$" --log-level error -- --config "$cfg" --control-socket "$sock" \
      > "$work/dp.log" 2>&1 &
    dp_pid=$!
    wait_for 3600 "$build/rocesw" show config --socket "$sock"
    start_s=$(secs "$t0" "$(now)") start_mib=$(hwm_mib "$dp_pid")

    t0=$(now)
    "$build/rocesw" reload "$moved" --socket "$sock" > "$work/reload.out"
    reload_s=$(secs "$t0" "$(now)") reload_mib=$(hwm_mib "$dp_pid")

    # roceswd adopts the running dataplane (a reload of 0 writes), then sees the file replaced
    cp "$cfg" "$work/switch.yaml"
    "$build/roceswd" --config "$work/switch.yaml" --attach "$sock" --foreground \
      > "$work/roceswd.log" 2>&1 &
    d_pid=$!
    wait_for 3600 grep -q "reloaded:" "$work/roceswd.log"
    cp "$moved" "$work/switch.yaml.new"
    t0=$(now)
    mv "$work/switch.yaml.new" "$work/switch.yaml"
    wait_for 3600 reloads_logged 2
    d_s=$(secs "$t0" "$(now)") d_mib=$(hwm_mib "$d_pid")
    grep -q "reloaded: $(( n / 100 )) table writes" "$work/roceswd.log" ||
      { echo "routes.sh: roceswd's reload did not move $(( n / 100 )) routes:" >&2; cat "$work/roceswd.log" >&2; exit 1; }
    kill "$d_pid"; wait "$d_pid" 2>/dev/null || true; d_pid=
    kill -INT "$dp_pid"; wait "$dp_pid" 2>/dev/null || true; dp_pid=

    printf '| %s | %s | %s s | %d MiB | %s s | %s MiB | %s s | %s MiB | %s s | %s MiB | %s |\n' \
      "$n" "$fam" "$cc_s" $(( cc_kb / 1024 )) "$start_s" "$start_mib" "$reload_s" "$reload_mib" \
      "$d_s" "$d_mib" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
