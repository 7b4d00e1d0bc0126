#!/usr/bin/env bash
# Instructions per packet, a count the machine's noise does not move: rocesw-dataplane's full
# pipeline (parse, LPM, E-ECMP hash, rewrite, traffic manager) and dpdk-testpmd macswap, each
# under valgrind --tool=callgrind, forwarding the same fixed number of packets of the
# bench/forward.sh mix from net_pcap to net_null. The capture is fed through a FIFO that stays
# open once every packet is in it, so the forwarding thread blocks in read() instead of polling an
# empty port: its instruction count is the forwarding of exactly those packets (plus its thread's
# start and the exit drain, the same few thousand for any count). Prints both counts per packet,
# their ratio and rocesw's top functions (callgrind_annotate, self cost). Needs no terminal.
# Usage: bench/instructions.sh [REPEATS] [TOP]   (the 4096-packet mix REPEATS times, default 10;
#        TOP functions, default 25). KEEP=DIR keeps the callgrind files in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
reps=${1:-10}
top=${2:-25}
build=${BENCH_BUILD:-build}
./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-instr.XXXXXX)
feeder= holder=
cleanup() {
  [[ -n $feeder ]] && kill "$feeder" 2>/dev/null || true
  [[ -n $holder ]] && kill "$holder" 2>/dev/null || true
  if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$work"/*.log "$work"/cg.* "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
sed "s|@MIX@|$work/fifo|; s|,infinite_rx=1||" bench/forward.yaml > "$work/switch.yaml"
n_mix=$(/usr/bin/python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
n = 0
o = 24  # the records after the global header: 16-byte header, then caplen bytes
while o < len(d):
    o += 16 + struct.unpack_from("<I", d, o + 8)[0]
    n += 1
print(n)' "$work/mix.pcap")
packets=$((n_mix * reps))
eal=(--no-huge -m 1024 --no-pci -l 0-1 --no-shconf --log-level error)

# The FIFO's reader is blocked on it with nothing left to read: the feeder has written every
# packet (it then execs sleep) and one of the program's threads waits in read() on the FIFO.
drained() {
  local pid=$1 fd t
  [[ $(cat /proc/"$feeder"/comm 2>/dev/null) == sleep ]] || return 1
  for fd in /proc/"$pid"/fd/*; do
    [[ $(readlink "$fd" 2>/dev/null) == "$work/fifo" ]] || continue
    fd=$(printf '0x%x' "${fd##*/}")
    for t in /proc/"$pid"/task/*/syscall; do
      read -r nr arg _ < "$t" 2>/dev/null || continue
      [[ $nr == 0 && $arg == "$fd" ]] && return 0
    done
  done
  return 1
}

# run KIND STOPPED CMD...: CMD under callgrind reads the FIFO until every packet is in, then is
# interrupted; the FIFO closes once its log shows STOPPED (or after 5 s when STOPPED is empty).
run() {
  local kind=$1 stopped=$2 i; shift 2
  rm -f "$work/fifo"; mkfifo "$work/fifo"
  ( cat "$work/mix.pcap"; for ((i = 1; i < reps; i++)); do tail -c +25 "$work/mix.pcap"; done
    exec sleep 100000 ) > "$work/fifo" &
  feeder=$!
  # stdin held open: testpmd without a terminal otherwise reads EOF as "press enter to exit"
  rm -f "$work/stdin"; mkfifo "$work/stdin"
  sleep 100000 > "$work/stdin" &
  holder=$!
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg.$kind.%p" \
    "$@" > "$work/$kind.log" 2>&1 < "$work/stdin" &
  local pid=$!
  local start=$SECONDS
  until drained "$pid"; do
    if ! kill -0 "$pid" 2>/dev/null || (( SECONDS - start > 1800 )); then
      kill "$pid" "$feeder" 2>/dev/null || true
      tail -20 "$work/$kind.log" >&2
      echo "instructions.sh: $kind did not read the whole capture" >&2
      exit 1
    fi
    sleep 1
  done
  kill -INT "$pid"
  # the stop is seen before the end of the capture, so the worker polls an empty port at most once
  for ((i = 0; i < 30; i++)); do
    sleep 1
    if [[ -z $stopped ]]; then (( i < 4 )) || break
    elif grep -q "$stopped" "$work/$kind.log"; then break; fi
  done
  kill "$feeder"; feeder=
  wait "$pid" || true
  kill "$holder"; holder=
}

run testpmd "Telling cores to stop" dpdk-testpmd "${eal[@]}" --file-prefix instr-tp \
  --vdev "net_pcap0,rx_pcap=$work/fifo" --vdev "net_null1,no-rx=1" \
  -- --forward-mode=macswap --auto-start --no-flush-rx --stats-period 3600 --total-num-mbufs=32768
run rocesw "" ./"$build"/rocesw-dataplane "${eal[@]}" --file-prefix instr-rsw \
  -- --config "$work/switch.yaml" --stats-json "$work/rocesw.json"

/usr/bin/python3 bench/instructions_report.py "$work" "$packets" "$top"
