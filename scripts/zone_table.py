#!/usr/bin/python3
"""Side-by-side table of zone replays: rocesw replay summary.json files → one row each.

usage: zone_table.py LABEL=DIR [LABEL=DIR ...]

Columns: uplink max/mean (bytes sent on the RTSW uplinks, role uplink in the switch configs:
the busiest over the mean), max queue depth anywhere, PFC frames sent by switches, ECN marks,
drops, and the collective's completion time (first packet sent to last packet received; for a
closed-loop run, --collective, its own time), its bus bandwidth (NCCL's busbw, closed loop) and
the packets the RC transport retransmitted."""
import json
import sys


def row(label, d):
    with open(f"{d}/summary.json") as f:
        s = json.load(f)
    up, depth, pfc, ecn = [], 0, 0, 0
    for sw in s["switches"]:
        for p in sw["ports"]:
            if sw["name"].startswith("rtsw") and int(p["name"][8:]) >= 256:
                up.append(p["tx_bytes"])
            depth = max([depth] + [q["max_depth_bytes"] for q in p["queues"]])
            ecn += sum(q["ecn_marked_packets"] for q in p["queues"])
            pfc += sum(v for k, v in p["pfc"].items() if k.endswith("_TX_PKTS"))
    mean = sum(up) / len(up) if up else 0
    done = s["collective_ns"]
    c = s.get("collective")
    busbw, retx = "-", "-"
    if c:
        done = c["time_ns"]
        busbw = f"{c['busbw_GBps']:.1f} GB/s" if c["complete"] else "-"
        retx = str(c["retransmitted"])
    return (label, f"{max(up) / mean:.2f}" if mean else "-", f"{depth / 1024:.0f} KiB", str(pfc),
            str(ecn), str(sum(s["drops"].values())),
            f"{done / 1e3:.1f} us" if done is not None else "incomplete", busbw, retx)


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    head = ("run", "uplink max/mean", "max queue", "PFC frames", "ECN marks", "drops",
            "collective", "busbw", "retransmitted")
    rows = [head] + [row(*a.split("=", 1)) for a in sys.argv[1:]]
    w = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for k, r in enumerate(rows):
        print("| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |")
        if k == 0:
            print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    return 0


if __name__ == "__main__":
    sys.exit(main())
