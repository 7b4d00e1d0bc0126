#!/usr/bin/env bash
# Frames/s through one switch with its host ports on net_af_packet vs net_af_xdp, on veths: a
# host namespace sends the same capture with `rocesw send --fast` (AF_XDP) through the switch to a
# second host; the two drivers alternate for ROUNDS rounds so a shared machine's drift hits both.
# Reported per driver: the median of frames forwarded per second of sending, and the loss.
# Takes the live-test lock (it creates namespaces and veths).
# Usage: bench/hostports.sh [FRAMES] [ROUNDS] [PAYLOAD]    (defaults 200000, 3, 256)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
if [[ -z ${ROCESW_BENCH_LOCKED:-} ]]; then
  export ROCESW_BENCH_LOCKED=1
  exec flock /tmp/rocesw-live.lock "$0" "$@"
fi
frames=${1:-200000}
rounds=${2:-3}
payload=${3:-256}
build=${BENCH_BUILD:-build}
./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-bench-hp.XXXXXX)
cleanup() {
  for h in h0 h1; do ip netns del "rswb-$h" 2>/dev/null || true; ip link del "rswb-$h" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

/usr/bin/python3 - "$work/load.pcap" "$frames" "$payload" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "py"))
import rocepkt
from scapy.utils import PcapWriter
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# 64 QPs of RDMA WRITE from h0 to h1; the frames differ only in QP and PSN
base = [bytes(rocepkt.roce(opcode=0x07, src="10.1.0.1", dst="10.1.0.3", dqp=0x100 + q, psn=0,
                           smac="02:00:00:00:10:01", dmac="02:00:00:00:01:00",
                           payload=bytes(size))) for q in range(64)]
with PcapWriter(path, sync=False) as w:
    for i in range(n):
        f = bytearray(base[i % 64])
        f[14 + 20 + 8 + 9:14 + 20 + 8 + 12] = (i & 0xFFFFFF).to_bytes(3, "big")  # PSN (ICRC stale: not checked)
        w.write(bytes(f))
PY

for h in h0 h1; do
  ip netns del "rswb-$h" 2>/dev/null || true; ip link del "rswb-$h" 2>/dev/null || true
  ip netns add "rswb-$h"
  ip link add "rswb-$h" type veth peer name eth0 netns "rswb-$h"
  for where in "" "ip netns exec rswb-$h"; do
    dev=$([[ -z $where ]] && echo "rswb-$h" || echo eth0)
    $where sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" || true
    $where ip link set "$dev" up
  done
done

for r in $(seq 1 "$rounds"); do
  for drv in net_af_packet net_af_xdp; do
    cat > "$work/switch.yaml" <<YAML
DEVICE_METADATA:
  localhost: {hostname: bench-hostports, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000, role: host, mtu: 1500, devargs: "${drv}0,iface=rswb-h0"}
  Ethernet8: {speed: 100000, role: host, mtu: 1500, devargs: "${drv}1,iface=rswb-h1"}
NEIGH:
  "Ethernet0|10.1.0.1": {neigh: "02:00:00:00:10:01"}
  "Ethernet8|10.1.0.3": {neigh: "02:00:00:00:10:03"}
STATIC_ROUTE:
  "10.1.0.3/32": {nexthop: 10.1.0.3}
YAML
    sock="$work/ctl.sock"
    "./$build/rocesw-dataplane" --no-huge -m 1024 --no-pci -l 0-1 --no-shconf \
      --file-prefix rswbench --log-level error -- --config "$work/switch.yaml" \
      --control-socket "$sock" > "$work/dp.log" 2> "$work/dp.err" &
    dp=$!
    until grep -q forwarding "$work/dp.err" && [[ -S $sock ]]; do
      kill -0 $dp 2>/dev/null || { cat "$work/dp.err" >&2; exit 1; }
      sleep 0.1
    done
    ip netns exec rswb-h0 "./$build/rocesw" send eth0 "$work/load.pcap" --fast --json \
      > "$work/send.$drv.$r.json"
    # the switch is done when its counters stop moving
    prev=-1
    while true; do
      "./$build/rocesw" show counters --json --socket "$sock" > "$work/c.$drv.$r.json"
      now=$(/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["conservation"]; print(c["received"], c["transmitted"])' "$work/c.$drv.$r.json")
      [[ $now == "$prev" ]] && break
      prev=$now; sleep 0.5
    done
    kill -INT $dp; wait $dp || true
  done
done

/usr/bin/python3 - "$work" "$rounds" "$frames" "$payload" <<'PY'
import json, os, statistics, sys
work, rounds, frames, payload = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"{frames} frames of {payload}-byte payload per run, {rounds} rounds, alternating")
print(f"{'driver':15} {'median frames/s':>16} {'rounds':>40} {'loss':>8}")
for drv in ("net_af_packet", "net_af_xdp"):
    fps, loss = [], []
    for r in range(1, rounds + 1):
        s = json.load(open(os.path.join(work, f"send.{drv}.{r}.json")))
        c = json.load(open(os.path.join(work, f"c.{drv}.{r}.json")))
        tx = {p["name"]: p for p in c["ports"]}["Ethernet8"]["tx_packets"]
        fps.append(tx / s["seconds"])
        loss.append(1 - tx / s["sent"])
    print(f"{drv:15} {statistics.median(fps):16,.0f} {' '.join(f'{x:,.0f}' for x in fps):>40} "
          f"{statistics.median(loss):8.1%}")
PY
