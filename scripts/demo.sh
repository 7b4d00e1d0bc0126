#!/usr/bin/env bash
# The demo: set up and build, generate a ring AllReduce for the 8 hosts of
# config/zone-2stage.yaml (1 and 4 QPs per connection), replay it through the zone with the
# 5-tuple and with the destination-QP (E-ECMP) hash policy, print a side-by-side table and write
# a report per run (build/demo/<run>/report.html). Works without hugepages or network.
# The live dataplane demo is scripts/demo-live.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build

msg=${DEMO_MESSAGE:-4194304}
# DEMO_CAPTURES=none keeps only summaries and reports (the captures are ~1 GB at the default size)
captures=${DEMO_CAPTURES:-all}
rm -rf build/demo && mkdir -p build/demo
runs=()
for qps in 1 4; do
  ./build/rocesw gen --pattern ring --hosts 8 --message "$msg" --qps "$qps" --qp-mode split \
    --out "build/demo/gen-q$qps" >/dev/null
  for policy in five_tuple dest_qp; do
    run="$policy-q$qps"
    echo "== ring AllReduce, $qps QP(s) per connection, hash $policy" >&2
    ./build/rocesw replay --config config/zone-2stage.yaml --in-dir "build/demo/gen-q$qps" \
      --hash-policy "config/hash-policies.yaml:$policy" --out "build/demo/$run" \
      --captures "$captures" | grep '^captures:' >&2
    runs+=("$run=build/demo/$run")
  done
done
echo
echo "ring AllReduce of $msg bytes over 8 hosts, config/zone-2stage.yaml (4 RTSW x 2 uplinks)"
/usr/bin/python3 scripts/zone_table.py "${runs[@]}"
echo
echo "reports: build/demo/<run>/report.html (open in a browser)"
if [ "$captures" != none ]; then
  echo "captures ($(du -sh build/demo | cut -f1) in build/demo; DEMO_CAPTURES=none skips them): per port"
  echo "build/demo/<run>/<switch>/<port>.pcap and per host build/demo/<run>/<host>.pcap"
fi
