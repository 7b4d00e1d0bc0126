#!/usr/bin/env bash
# What the workers' idle back-off costs in latency (docs/dataplane.md, "Back-off"): the lab of
# config/zone-2stage.yaml (scripts/lab.py), all six switches on one worker (-l 0-1), h0 pings h1
# (rack 1 to rack 2: rtsw1, ctsw1 or ctsw2, rtsw2) one echo at a time with an idle spell between
# them, with --idle-sleep-us 0 (spin) and the default 50, alternating for ROUNDS rounds so a
# shared machine's drift hits both. Latency per crossing of the zone is read from captures on
# both hosts' eth0 (kernel timestamps, one clock): request leaving h0 -> arriving at h1, and
# reply leaving h1 -> arriving at h0. Reported per setting: median and p99 of the crossings.
# Takes the live-test lock (it creates namespaces and veths).
# Usage: bench/idle_latency.sh [PINGS] [ROUNDS] [INTERVAL_S]    (defaults 300, 3, 0.02)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
if [[ -z ${ROCESW_BENCH_LOCKED:-} ]]; then
  export ROCESW_BENCH_LOCKED=1
  exec flock /tmp/rocesw-live.lock "$0" "$@"
fi
pings=${1:-300}
rounds=${2:-3}
interval=${3:-0.02}
build=${BENCH_BUILD:-build}
zone=config/zone-2stage.yaml
./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-bench-idle.XXXXXX)
dp_pid=
cleanup() {
  [[ -n $dp_pid ]] && kill -INT "$dp_pid" 2>/dev/null && wait "$dp_pid" 2>/dev/null || true
  scripts/lab.py down "$zone" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
scripts/lab.py up "$zone" >/dev/null

one() { # $1: idle sleep in us, $2: tag; captures in $work/$2-h0.pcap, $work/$2-h1.pcap
  "$build/rocesw-dataplane" --no-huge -m 2048 --no-pci -l 0-1 --no-shconf --file-prefix rswidle \
    --log-level error -- --zone "$zone" --idle-sleep-us "$1" >"$work/$2.out" 2>"$work/$2.log" &
  dp_pid=$!
  until grep -q forwarding "$work/$2.log"; do
    kill -0 "$dp_pid" 2>/dev/null || { cat "$work/$2.log" >&2; exit 1; }
    sleep 0.1
  done
  local caps=()
  for h in h0 h1; do
    : >"$work/$2-$h.err"
    # immediate mode: each frame reaches tcpdump as it comes, not when a ring block is retired
    # (a block still open when tcpdump is stopped would lose the last echoes)
    ip netns exec "$h" tcpdump -i eth0 -U --immediate-mode -n -s 128 --time-stamp-precision=nano \
      -w "$work/$2-$h.pcap" icmp 2>"$work/$2-$h.err" &
    caps+=($!)
  done
  for h in h0 h1; do
    until grep -q "listening on" "$work/$2-$h.err"; do sleep 0.05; done
  done
  ip netns exec h0 ping -c 3 -i 0.2 10.1.0.3 >/dev/null  # ARP learnt both ways first
  ip netns exec h0 ping -n -q -c "$pings" -i "$interval" 10.1.0.3 >"$work/$2.ping"
  # every request and reply of both pings on both hosts, unless some were lost (then 5 s more)
  local want=$(( 2 * (3 + pings) )) t0=$SECONDS
  for h in h0 h1; do
    until (( $(tcpdump -r "$work/$2-$h.pcap" 2>/dev/null | wc -l) >= want || SECONDS - t0 > 5 )); do
      sleep 0.05
    done
  done
  kill -INT "${caps[@]}"; wait "${caps[@]}" 2>/dev/null || true
  kill -INT "$dp_pid"; wait "$dp_pid" || true
  dp_pid=
}

echo "$(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  one 0 "spin-$r"
  one 50 "sleep50-$r"
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$work" "$rounds" <<'PY'
import os, statistics, subprocess, sys

work, rounds = sys.argv[1], int(sys.argv[2])


def times(path):
    """{(icmp type, seq): capture time in ns} of the echo requests (8) and replies (0)."""
    out = subprocess.run(["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch",
                          "-e", "icmp.type", "-e", "icmp.seq"], capture_output=True, text=True,
                         check=True).stdout
    t = {}
    for line in out.splitlines():
        ts, typ, seq = line.split("\t")
        sec, _, frac = ts.partition(".")
        t[(int(typ), int(seq))] = int(sec) * 10**9 + int((frac + "000000000")[:9])
    return t


def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(0.99 * len(v)))]


for name in ("spin", "sleep50"):
    lat = []
    want = 0
    for r in range(1, rounds + 1):
        with open(os.path.join(work, f"{name}-{r}.ping")) as f:
            want += 2 * int(f.read().split(" packets transmitted")[0].split()[-1])
        h0, h1 = (times(os.path.join(work, f"{name}-{r}-{h}.pcap")) for h in ("h0", "h1"))
        for (typ, seq), t in h0.items():
            if typ == 8 and (8, seq) in h1:
                lat.append(h1[(8, seq)] - t)          # request: h0 -> zone -> h1
            if typ == 0 and (0, seq) in h1:
                lat.append(t - h1[(0, seq)])          # reply: h1 -> zone -> h0
    setting = "--idle-sleep-us 0 " if name == "spin" else "--idle-sleep-us 50"
    print(f"{setting}: {len(lat)} of {want} crossings of the zone (3 switches), "
          f"median {statistics.median(lat) / 1000:.1f} us, p99 {p99(lat) / 1000:.1f} us")
PY
