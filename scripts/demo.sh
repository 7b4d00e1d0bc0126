#!/usr/bin/env bash
# The demo: set up and build, then run a ring AllReduce closed loop on the 8 hosts of
# config/zone-2stage.yaml (each step waits for its data, RC transport; docs/replay.md) with 1, 4
# and 16 QPs per connection, with the 5-tuple and with the destination-QP (E-ECMP) hash policy;
# then the same with a failed CTSW, and a 7-to-1 incast with and without CTS admission. Prints a
# side-by-side table, writes a report per run (build/demo/<run>/report.html) and one page with
# every run side by side on shared axes (build/demo/compare.html); last, a short version of the
# fabric study (docs/study.md): E-ECMP, pinning, TE, flowlets and spraying on one fragmented
# placement, with and without a CTSW failure. Works without hugepages or network.
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
replay() { # RUN [replay options...]
  local run=$1; shift
  echo "== $run" >&2
  ./build/rocesw replay --config config/zone-2stage.yaml --out "build/demo/$run" --sample-ns 0 \
    --quiet --captures "$captures" "$@" | grep '^captures:' >&2
  runs+=("$run=build/demo/$run")
}
for qps in 1 4 16; do
  for policy in five_tuple dest_qp; do
    replay "ring-$policy-q$qps" --collective "ring,size=$msg,qps=$qps,split=even" \
      --hash-policy "config/hash-policies.yaml:$policy"
  done
done
for policy in five_tuple dest_qp; do
  replay "ring-$policy-q4-ctsw1-fails" --collective "ring,size=$msg,qps=4,split=even" \
    --hash-policy "config/hash-policies.yaml:$policy" --fail ctsw1@20us
done
replay "incast-7to1" --collective "incast,size=$msg,root=0,chunk=262144"
replay "incast-7to1-cts2" --collective "incast,size=$msg,root=0,chunk=262144,cts=2"
echo
echo "closed-loop collectives of $msg bytes over the 8 hosts of config/zone-2stage.yaml"
echo "(4 RTSW x 2 uplinks to 2 CTSW, 400G; busbw as NCCL's tests compute it)"
/usr/bin/python3 scripts/zone_table.py "${runs[@]}"
./build/rocesw report compare "${runs[@]}" --out build/demo/compare.html
echo
echo "every run side by side on shared axes: build/demo/compare.html (one file, open it in a"
echo "browser); reports per run: build/demo/<run>/report.html"
if [ "$captures" != none ]; then
  echo "captures ($(du -sh build/demo | cut -f1) in build/demo; DEMO_CAPTURES=none skips them): per port"
  echo "build/demo/<run>/<switch>/<port>.pcap and per host build/demo/<run>/<host>.pcap"
fi
echo
echo "the fabric study, short (docs/study.md has the whole one): a 16-rank ring AllReduce of"
echo "4 MiB on a 4-rack, 4-CTSW zone, fragmented placement, with and without ctsw1 failing at 40 us"
/usr/bin/python3 scripts/fabric_study.py --out build/demo/study --size 4M --fail-at 40000 \
  --reinstall-ns 20000 --placements fragmented --failures none,ctsw \
  --routings ecmp-q1,ecmp-qN,pinned,te,flowlet-nak,spray-q-nak,spray-q-accept
echo "(x bound: the ring's wire time, and after the failure the 3 uplinks left to each rack's 4"
echo "flows. Sprayed QPs all lose packets when the CTSW fails, and a receiver that places out of"
echo "order sends no NAK: each waits one retransmission timeout, 67.1 ms. Each run's report:"
echo "build/demo/study/runs/<run>/report.html; the whole study and its reading: docs/study.md)"
