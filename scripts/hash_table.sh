#!/usr/bin/env bash
# The hash-lab table of docs/hash-lab.md: a ring AllReduce of 16 hosts (rocesw gen, 16 MiB per
# rank) followed through the two hash stages of config/zone-hashlab (4 RTSW x 8 uplinks, 4 CTSW
# hashing again over 2 parallel links per rack) under the 5-tuple, destination-QP and E-ECMP
# (both) policies of config/hash-policies.yaml, for 1, 4 and 16 QPs per connection (split) and
# Linux vs fixed (49152) UDP source ports. Prints a Markdown table; "ideal" is the max/mean of
# the best possible spread of that many equal flows over the 32 uplinks.
# Usage: scripts/hash_table.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
build=${1:-build}
[[ -x $build/rocesw ]] || ./scripts/build.sh "$build" >/dev/null
work=$(mktemp -d /tmp/rocesw-hashtable.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "| QPs | source port | policy | flows | uplinks max/mean (ideal) | uplinks Jain | downlinks max/mean |"
echo "|---|---|---|---|---|---|---|"
for qps in 1 4 16; do
  for sport in linux fixed; do
    out=$work/q$qps-$sport
    "$build"/rocesw gen --pattern ring --hosts 16 --message 16777216 --qps "$qps" \
      --qp-mode split --sport "$sport" --out "$out" >/dev/null
    "$build"/rocesw hash --policy config/hash-policies.yaml --zone config/zone-hashlab/zone.yaml \
      --json $(for f in "$out"/h*.pcap; do printf -- '--pcap %s ' "$f"; done) > "$out/lab.json"
    /usr/bin/python3 - "$out/lab.json" "$qps" "$sport" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
for p in doc["policies"]:
    up, down = p["tiers"]["up"], p["tiers"]["down"]
    per = doc["flows"] / up["links"]
    ideal = math.ceil(per) / per
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {p['name']} | {doc['flows']} | "
          f"{up['max_mean']:.2f} ({ideal:.2f}) | {up['jain']:.3f} | {down['max_mean']:.2f} |")
PY
  done
done
