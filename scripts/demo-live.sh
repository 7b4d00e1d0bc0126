#!/usr/bin/env bash
# The live demo: set up, build, and run the live dataplane over bundled pcap ports twice: with the 5-tuple hash
# and with E-ECMP (5-tuple + destination QP by UDF). Prints per-port and per-ECMP-member counters
# and the uplink spread of each run. Works without hugepages.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build

mkdir -p build/demo
/usr/bin/python3 scripts/demo_traffic.py build/demo

eal=(--no-huge -m 1024 --no-pci -l 0-1 --no-shconf --file-prefix rocesw-demo --log-level error)
run() {
  local policy=$1 out=build/demo/out-$1
  rm -rf build/demo/out "$out"
  mkdir -p build/demo/out
  sed "s/hash_policy: eecmp_dest_qp .*/hash_policy: $policy/" config/demo-rtsw-pcap.yaml \
    > build/demo/switch-$policy.yaml
  echo "== hash policy: $policy =="
  ./build/rocesw-dataplane "${eal[@]}" -- --config build/demo/switch-$policy.yaml \
    --duration 2 --stats-json build/demo/stats-$policy.json
  mv build/demo/out "$out"
  echo
}
run default
run eecmp_dest_qp

/usr/bin/python3 - <<'PY'
import json
print("uplink packets (4 uplinks, 2 hosts x 4 peers x 4 QPs, fixed UDP source port)")
print(f"{'policy':<16}" + "".join(f"{n:>13}" for n in ("Ethernet256", "Ethernet264", "Ethernet272", "Ethernet280")) + f"{'max/mean':>10}")
for pol in ("default", "eecmp_dest_qp"):
    s = json.load(open(f"build/demo/stats-{pol}.json"))
    up = [p["tx_packets"] for p in s["ports"] if p["role"] == "uplink"]
    mean = sum(up) / len(up)
    print(f"{pol:<16}" + "".join(f"{x:>13}" for x in up) + f"{max(up) / mean:>10.2f}")
PY
echo "output pcaps: build/demo/out-*/Ethernet*.pcap (open them in Wireshark)"
