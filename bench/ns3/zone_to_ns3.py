#!/usr/bin/python3
"""Describe a rocesw zone replay for bench/ns3/replay_ns3.cc.

Reads the summary.json of a `rocesw replay` of a zone and writes a text file with one
entry a line:

  node NAME host|switch
  link A B SPEED_MBPS DELAY_NS       an end is a host or SWITCH|PORT; delay = propagation
  route SWITCH SRC DST SPORT DPORT PORT
  in HOST FILE                       the capture the host sends (DIR/HOST.pcap)

Routes are the replay's own: for every flow of summary.json, each switch on its path forwards
it out of the port its path leaves that switch by (flows[].path), so ns-3 sends every frame
over the links rocesw's ECMP chose. A flow that left one switch by two ports (ECMP moved it
after a failure) cannot be a static route and is refused.

Usage: zone_to_ns3.py SUMMARY_JSON CAPTURE_DIR OUT
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    summary, capdir, out = sys.argv[1:]
    s = json.load(open(summary))
    if "switches" not in s or "links" not in s:
        sys.exit(f"zone_to_ns3: {summary} is not the summary of a zone replay")
    lines = [f"node {h['name']} host" for h in s["hosts"]]
    lines += [f"node {sw['name']} switch" for sw in s["switches"]]
    for link in s["links"]:
        lines.append(f"link {link['a']} {link['b']} {link['speed']} {link['delay_ns']}")
    routes = {}
    for f in s["flows"]:
        if f["protocol"] != 17:
            sys.exit(f"zone_to_ns3: flow {f['src']} -> {f['dst']} is not UDP")
        key = f"{f['src']} {f['dst']} {f['sport']} {f['dport']}"
        for hop in f["path"][1:]:
            sw = hop["from"].split("|")[0]
            if routes.setdefault((sw, key), hop["from"]) != hop["from"]:
                sys.exit(f"zone_to_ns3: flow {key} leaves {sw} by two ports "
                         f"({routes[(sw, key)]} and {hop['from']}): not a static route")
    lines += [f"route {sw} {key} {port.split('|')[1]}" for (sw, key), port in routes.items()]
    for h in s["hosts"]:
        pcap = os.path.join(capdir, h["name"] + ".pcap")
        if os.path.exists(pcap):
            lines.append(f"in {h['name']} {os.path.abspath(pcap)}")
    with open(out, "w") as o:
        o.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
