#!/usr/bin/env bash
# The hash-lab table of docs/hash-lab.md: a ring AllReduce of 16 hosts (rocesw gen), its flows
# hashed onto 8 uplinks (one RTSW hash stage, resilient 4096 buckets) under the 5-tuple and the
# destination-QP policies of tests/policies/lab.yaml, for 1, 4 and 16 QPs per connection (split)
# and Linux vs fixed (49152) UDP source ports. Prints a Markdown table.
# Usage: scripts/hash_table.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
build=${1:-build}
[[ -x $build/rocesw ]] || ./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-hashtable.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "| QPs | source port | policy | flows | max/mean | Jain | largest flows sharing an uplink |"
echo "|---|---|---|---|---|---|---|"
for qps in 1 4 16; do
  for sport in linux fixed; do
    out=$work/q$qps-$sport
    "$build"/rocesw gen --pattern ring --hosts 16 --message 16777216 --qps "$qps" \
      --qp-mode split --sport "$sport" --out "$out" >/dev/null
    "$build"/rocesw hash --policy tests/policies/lab.yaml --members 8 --json \
      $(for f in "$out"/h*.pcap; do printf -- '--pcap %s ' "$f"; done) > "$out/lab.json"
    /usr/bin/python3 - "$out/lab.json" "$qps" "$sport" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for p in doc["policies"]:
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {p['name']} | {doc['traffic']['flows']} | "
          f"{p['max_mean']:.2f} | {p['jain']:.3f} | {p['fat_flows_colliding']} of {p['fat_flows']} |")
PY
  done
done
