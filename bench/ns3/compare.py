#!/usr/bin/python3
"""Checks and figures of bench/replay_ns3.sh.

compare.py counts SUMMARY_JSON NS3_COUNTS
    Every switch port and host of the rocesw replay (summary.json) against ns-3's counts (lines
    NAME RX TX from replay_ns3 --counts): the data frames each port received and sent must be
    equal (rocesw's PFC frames, which ns-3 does not model, are left out). Prints the switch-hops
    (data frames received by switch ports) and rocesw's PFC frames; exits 1 on any difference.

compare.py first-frame ZONE_YAML SUMMARY_JSON CAPTURE_DIR ROCESW_OUT NS3_OUT
    The first frame host h0 sends, at every switch port its flow leaves by, in both simulators'
    captures (ns-3 run with --captures tx): its departure time against the links' model, worked
    out here from the zone file (lengths at 5 ns/m, speeds): a frame starting at t is received
    whole at t + (frame + FCS + preamble) x 8 / speed + propagation, and a switch with nothing
    queued sends it on at once. Each simulator must be within 1 ns per hop of it (rocesw counts
    whole nanoseconds, ns-3 picoseconds written as nanoseconds); the IPv4 packet must be the
    same bytes in both. Exits 1 otherwise.

compare.py report RESULTS
    RESULTS has lines ROUND VARIANT SIM HOPS SETUP_CPU_S RUN_CPU_S (SIM rocesw or ns3): prints
    per round and variant the packet-hops per CPU second after set-up of each and their ratio,
    then the median ratio per variant.
"""
import json
import os
import statistics
import struct
import sys

PFC_RX = "_RX_PKTS"
MIN_RUN_S = 0.1  # CPU seconds after set-up for a rate: /usr/bin/time counts in 10 ms


def rocesw_ports(summary):
    """{name: (rx, tx)} of data frames: switch ports as SWITCH|PORT, hosts by name."""
    s = json.load(open(summary))
    ports = {}
    for sw in s["switches"]:
        for p in sw["ports"]:
            pfc_rx = sum(v for k, v in p["pfc"].items() if k.endswith(PFC_RX))
            pfc_tx = sum(v for k, v in p["pfc"].items() if k.endswith("_TX_PKTS"))
            ports[f"{sw['name']}|{p['name']}"] = (p["rx_packets"] - pfc_rx, p["tx_packets"] - pfc_tx,
                                                 pfc_rx)
    for h in s["hosts"]:
        ports[h["name"]] = (h["rx_packets"] - h["pfc_rx_frames"], h["tx_packets"], 0)
    return ports


def counts(summary, ns3_counts):
    ours = rocesw_ports(summary)
    theirs = {}
    for line in open(ns3_counts):
        name, rx, tx = line.split()
        theirs[name] = (int(rx), int(tx))
    bad = []
    for name, (rx, tx, _) in ours.items():
        got = theirs.get(name, (0, 0))  # ports without a link are not in ns-3
        if (rx, tx) != got:
            bad.append(f"{name}: rocesw received/sent {rx}/{tx}, ns-3 {got[0]}/{got[1]}")
    bad += [f"{name}: only in ns-3" for name in theirs if name not in ours]
    if bad:
        print("ns-3 and rocesw moved different frames:\n  " + "\n  ".join(bad[:20]),
              file=sys.stderr)
        sys.exit(1)
    hops = sum(rx for name, (rx, _, _) in ours.items() if "|" in name)
    pfc = sum(p for _, _, p in ours.values())
    print(hops, pfc)


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


def report(results):
    rows = [line.split() for line in open(results) if line.strip()]
    runs = {}
    for rnd, variant, sim, hops, setup, run in rows:
        runs[(int(rnd), variant, sim)] = (int(hops), float(setup), float(run))
    ratios = {}
    for (rnd, variant, sim), (hops, setup, run) in sorted(runs.items()):
        if sim != "rocesw" or (rnd, variant, "ns3") not in runs:
            continue
        rates = {}
        for s in ("rocesw", "ns3"):
            h, su, ru = runs[(rnd, variant, s)]
            rates[s] = h / (ru - su) if ru - su >= MIN_RUN_S else None
        if None in rates.values():
            print(f"round {rnd}, captures {variant:>4}: a run took less than {MIN_RUN_S} CPU s "
                  "after set-up, too short for /usr/bin/time's 10 ms: no ratio (larger sizes)")
            continue
        ratio = rates["rocesw"] / rates["ns3"]
        ratios.setdefault(variant, []).append(ratio)
        print(f"round {rnd}, captures {variant:>4}: {hops} switch-hops; rocesw "
              f"{rates['rocesw'] / 1e6:.3f} M hops per CPU s (set-up {runs[(rnd, variant, 'rocesw')][1]:.2f} s "
              f"of {runs[(rnd, variant, 'rocesw')][2]:.2f} s), ns-3 {rates['ns3'] / 1e6:.3f} "
              f"(set-up {runs[(rnd, variant, 'ns3')][1]:.2f} s of {runs[(rnd, variant, 'ns3')][2]:.2f} s): "
              f"rocesw/ns-3 {ratio:.2f}x")
    goals = {"off": 5, "on": 3}
    for variant, rs in sorted(ratios.items()):
        print(f"median rocesw/ns-3 over {len(rs)} rounds, captures {variant}: "
              f"{statistics.median(rs):.2f}x (rounds {' / '.join(f'{r:.2f}' for r in rs)}; "
              f"issue 29's goal {goals.get(variant, '?')}x)")


def main():
    cmds = {"counts": (counts, 2), "first-frame": (first_frame, 5), "report": (report, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) - 2 != cmds[sys.argv[1]][1]:
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    fn, _ = cmds[sys.argv[1]]
    fn(*sys.argv[2:])


if __name__ == "__main__":
    main()
