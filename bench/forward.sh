#!/usr/bin/env bash
# One worker forwarding a RoCEv2 mix from net_pcap (infinite_rx) to net_null ports through the
# full ingress pipeline (parse, LPM, E-ECMP hash with UDF, resilient buckets, TTL/MAC rewrite),
# against dpdk-testpmd --forward-mode=macswap on the same vdevs and traffic, in the same run.
# Prints Mpps, cycles per packet and the ratio. Usage: bench/forward.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-12}
./scripts/build.sh "${BENCH_BUILD:-build}"
work=$(mktemp -d /tmp/rocesw-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
sed "s|@MIX@|$work/mix.pcap|" bench/forward.yaml > "$work/switch.yaml"
eal=(--no-huge -m 2048 --no-pci -l 0-1 --no-shconf --log-level error)

timeout $((secs + 20)) dpdk-testpmd "${eal[@]}" --file-prefix bench-tp \
  --vdev "net_pcap0,rx_pcap=$work/mix.pcap,infinite_rx=1" --vdev "net_null1,no-rx=1" \
  -- --forward-mode=macswap --stats-period 1 --total-num-mbufs=32768 \
  > "$work/testpmd.log" 2>&1 &
tp=$!
sleep "$secs"; kill -INT $tp 2>/dev/null || true; wait $tp 2>/dev/null || true

./"${BENCH_BUILD:-build}"/dataplane/live/rocesw-dataplane "${eal[@]}" --file-prefix bench-rsw -- \
  --config "$work/switch.yaml" --stats-period 1 --duration "$secs" > "$work/rocesw.log" 2>&1

/usr/bin/python3 - "$work" <<'PY'
import re, statistics, sys
work = sys.argv[1]
tp = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", open(f"{work}/testpmd.log").read())]
# testpmd prints port 0 then port 1 each period: the forwarded rate is port 1's Tx
tp = [x for i, x in enumerate(tp) if i % 2 == 1]
rs, cur = [], 0
for line in open(f"{work}/rocesw.log"):
    m = re.match(r"(\S+)\s+rx\s+([\d.]+) pps\s+tx\s+([\d.]+) pps", line)
    if not m:
        continue
    if m.group(1) == "Ethernet0":
        if cur:
            rs.append(cur)
        cur = 0
    cur += float(m.group(3))
rs.append(cur)
def steady(v):
    v = [x for x in v if x > 0][2:]  # skip start-up periods
    return statistics.median(v) if v else 0.0
hz = None
for line in open("/proc/cpuinfo"):
    if line.startswith("cpu MHz"):
        hz = float(line.split(":")[1]) * 1e6
        break
t, r = steady(tp), steady(rs)
print(f"{'':<28}{'Mpps':>8}{'cycles/pkt':>12}")
for name, v in (("dpdk-testpmd macswap", t), ("rocesw full ingress", r)):
    cyc = f"{hz / v:.0f}" if hz and v else "-"
    print(f"{name:<28}{v / 1e6:>8.2f}{cyc:>12}")
print(f"ratio rocesw/testpmd: {r / t:.2f}" if t else "ratio: testpmd produced no rate")
PY
