#!/usr/bin/python3
"""Checks and figures of bench/replay_ns3.sh.

compare.py counts SUMMARY_JSON NS3_COUNTS
    Every switch port and host of the rocesw replay (summary.json) against ns-3's counts (lines
    NAME RX TX from replay_ns3 --counts): the data frames each port sent and each host received
    must be equal, and so must the switch-hops (data frames received by switch ports; rocesw's
    PFC frames, which ns-3 does not model, are left out). Prints the switch-hops and the PFC
    frames rocesw's switches generated; exits 1 on any difference.

compare.py first-frame ZONE_YAML SUMMARY_JSON CAPTURE_DIR ROCESW_OUT NS3_OUT
    The first frame host h0 sends, at every switch port its flow leaves by, in both simulators'
    captures (ns-3 run with --captures tx): its departure time against the links' model, worked
    out here from the zone file (lengths at 5 ns/m, speeds): a frame starting at t is received
    whole at t + (frame + FCS + preamble) x 8 / speed + propagation, and a switch with nothing
    queued sends it on at once. Each simulator must be within 1 ns per hop of it (rocesw counts
    whole nanoseconds, ns-3 picoseconds written as nanoseconds); the IPv4 packet must be the
    same bytes in both but for the TTL and header checksum rocesw's routers rewrite. Exits 1
    otherwise.

compare.py workload SUMMARY_JSON LABEL
    One line on what rocesw's replay moved: frames, switch-hops, the deepest queue, PFC frames.

compare.py report RESULTS
    RESULTS has lines ROUND VARIANT SIM HOPS SETUP_CPU_S RUN_CPU_S RUN_SYSTEM_S RUN_PEAK_RSS_KB
    (VARIANT off, on or cut: no captures, whole frames, the first bytes of each; SIM rocesw or
    ns3; CPU = user + system): prints per round and variant the packet-hops per
    CPU second after set-up of each and their ratio, then the median ratio per variant.
"""
import json
import os
import statistics
import struct
import sys

MIN_RUN_S = 0.1  # CPU seconds after set-up for a rate: /usr/bin/time counts in 10 ms


def counts(summary, ns3_counts):
    s = json.load(open(summary))
    theirs = {}
    for line in open(ns3_counts):
        name, rx, tx = line.split()
        theirs[name] = (int(rx), int(tx))
    # rocesw's tx_packets count data frames only (PFC frames it generates are not in them), so
    # do its hosts' rx_packets; a switch port's rx_packets also count PFC frames it received,
    # which the switch consumed
    want = {f"{sw['name']}|{p['name']}": ("sent", p["tx_packets"], 1)
            for sw in s["switches"] for p in sw["ports"]}
    for h in s["hosts"]:
        want[h["name"]] = ("sent", h["tx_packets"], 1)
        want[h["name"] + " "] = ("received", h["rx_packets"], 0)
    bad = []
    for name, (what, n, col) in want.items():
        got = theirs.get(name.strip(), (0, 0))[col]  # ports without a link are not in ns-3
        if n != got:
            bad.append(f"{name.strip()} {what} {n} frames in rocesw, {got} in ns-3")
    bad += [f"{name}: only in ns-3" for name in theirs if name not in want]
    hops = sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"])
    consumed = sum(sw["conservation"]["consumed"] for sw in s["switches"])
    ns3_hops = sum(rx for name, (rx, _) in theirs.items() if "|" in name)
    if hops - consumed != ns3_hops:
        bad.append(f"switch-hops: rocesw {hops} less {consumed} PFC frames, ns-3 {ns3_hops}")
    if bad:
        print("ns-3 and rocesw moved different frames:\n  " + "\n  ".join(bad[:20]),
              file=sys.stderr)
        sys.exit(1)
    print(hops - consumed, s["conservation"]["generated"])


def pcap_records(path):
    """Yields (time in ns, frame bytes) of a classic pcap file, micro- or nanosecond."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        scale = {0xA1B2C3D4: 1000, 0xA1B23C4D: 1}.get(magic)
        if scale is None:
            sys.exit(f"{path}: not a little-endian pcap file")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _ = struct.unpack("<IIII", rec)
            yield sec * 10**9 + frac * scale, f.read(incl)


def routed(ip):
    """An IPv4 packet less what a router rewrites: the TTL and the header checksum."""
    return ip[:8] + ip[9:10] + ip[12:]


def first_frame(zone_yaml, summary, capdir, rocesw_out, ns3_out):
    import yaml  # Debian's python3-yaml, for the zone file alone

    zone = yaml.safe_load(open(zone_yaml))
    length = {}
    for link in zone["LINK"]:
        if "length" not in link:
            sys.exit(f"{zone_yaml}: the check needs every link's length")
        m = float(str(link["length"]).rstrip("m"))
        length[link["a"]] = length[link["b"]] = m
    speeds = {}
    for sw in zone["SWITCH"]:
        cfg = yaml.safe_load(open(os.path.join(os.path.dirname(zone_yaml),
                                               zone["SWITCH"][sw]["config"])))
        for port, p in cfg["PORT"].items():
            speeds[f"{sw}|{port}"] = int(p["speed"]) * 10**6
    t0, frame = next(pcap_records(os.path.join(capdir, "h0.pcap")))
    ip = frame[14:]
    src, dst = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
    flow = next(f for f in json.load(open(summary))["flows"]
                if (f["src"], f["dst"]) == (src, dst))
    # the first link: h0 to its switch port; the host's NIC runs at the port's speed
    wire = len(frame) + 4 + 8
    t, bad, seen = t0, [], []
    for hop, (arrived, leaves) in enumerate(zip(flow["path"], flow["path"][1:]), 1):
        t += wire * 8 / speeds[arrived["to"]] * 1e9 + length[arrived["to"]] * 5
        sw, port = leaves["from"].split("|")
        for sim, out, skip in (("rocesw", rocesw_out, 14), ("ns-3", ns3_out, 2)):
            got = next((ts, rec) for ts, rec in pcap_records(os.path.join(out, sw, port + ".pcap"))
                       if rec[skip:][12:20] == ip[12:20])
            if abs(got[0] - t) > hop:
                bad.append(f"{sim} sent it from {leaves['from']} at {got[0]} ns, the model "
                           f"says {t:.2f} ns (hop {hop})")
            if routed(got[1][skip:]) != routed(ip):
                bad.append(f"{sim} sent other bytes from {leaves['from']}")
        seen.append(f"{leaves['from']} {t:.2f}")
    if bad:
        print("first frame of h0:\n  " + "\n  ".join(bad), file=sys.stderr)
        sys.exit(1)
    print(f"check: the first frame of h0 ({src} -> {dst}, {len(frame)} bytes) left "
          f"{', '.join(seen)} ns (the link model) within 1 ns per hop in both simulators, "
          f"the same bytes but for TTL and checksum")


def workload(summary, label):
    s = json.load(open(summary))
    hops = sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"]) - \
        sum(sw["conservation"]["consumed"] for sw in s["switches"])
    depth = max(q["max_depth_bytes"] for sw in s["switches"] for p in sw["ports"]
                for q in p["queues"])
    print(f"{label} ({len(s['switches'])} switches, {len(s['hosts'])} hosts): "
          f"{s['conservation']['entered']} frames, {hops} switch-hops, deepest queue "
          f"{depth / 2**20:.1f} MiB, {s['conservation']['generated']} PFC frames sent by "
          f"switches, last frame out at {s['end_ns'] / 1e3:.1f} us")


def report(results):
    runs = {}
    for line in open(results):
        rnd, variant, sim, hops, setup, run, system, rss = line.split()
        runs[(int(rnd), variant, sim)] = (int(hops), float(setup), float(run), float(system),
                                          int(rss))
    ratios = {}
    order = {"off": 0, "on": 1, "cut": 2}  # none, whole frames, headers (the bench's CUT)
    for (rnd, variant, sim), (hops, *_) in sorted(runs.items(),
                                                  key=lambda kv: (kv[0][0], order[kv[0][1]])):
        if sim != "rocesw" or (rnd, variant, "ns3") not in runs:
            continue
        rates, costs = {}, {}
        for s in ("rocesw", "ns3"):
            _, setup, run, system, rss = runs[(rnd, variant, s)]
            rates[s] = hops / (run - setup) if run - setup >= MIN_RUN_S else None
            rate = f"{rates[s] / 1e6:.3f}" if rates[s] else "-"
            costs[s] = (f"{rate} M hops per CPU s (CPU {run:.2f} s, {system:.2f} s of it "
                        f"system; set-up {setup:.2f} s; peak RSS {rss / 1024:.0f} MB)")
        line = (f"round {rnd}, captures {variant:>3}: {hops} switch-hops; rocesw "
                f"{costs['rocesw']}, ns-3 {costs['ns3']}")
        if None in rates.values():
            print(f"{line}: a run took less than {MIN_RUN_S} CPU s after set-up, too short "
                  "for /usr/bin/time's 10 ms: no ratio (larger sizes)")
            continue
        ratio = rates["rocesw"] / rates["ns3"]
        ratios.setdefault(variant, []).append(ratio)
        print(f"{line}: rocesw/ns-3 {ratio:.2f}x")
    goals = {"off": 5, "on": 3, "cut": 3}
    for variant, rs in sorted(ratios.items(), key=lambda kv: order[kv[0]]):
        print(f"median rocesw/ns-3 over {len(rs)} rounds, captures {variant}: "
              f"{statistics.median(rs):.2f}x (rounds {' / '.join(f'{r:.2f}' for r in rs)}; "
              f"issue 29's goal {goals.get(variant, '?')}x)")


def main():
    cmds = {"counts": (counts, 2), "first-frame": (first_frame, 5), "workload": (workload, 2),
            "report": (report, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) - 2 != cmds[sys.argv[1]][1]:
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    fn, _ = cmds[sys.argv[1]]
    try:
        fn(*sys.argv[2:])
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"compare.py {sys.argv[1]}: {e}")


if __name__ == "__main__":
    main()
