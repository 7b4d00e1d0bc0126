#!/usr/bin/env python3
"""The fabric study: one zone, one collective, every way of spreading it over the uplinks, with
and without failures, closed loop (docs/study.md).

  scripts/fabric_study.py --out build/study [--rocesw build/rocesw] [--size 16M]

Writes a two-stage zone (scripts/gen_zone.py; default 4 racks of 4 hosts, 4 CTSWs, 400G) and
runs a ring AllReduce over all its hosts with `rocesw replay --collective`, once per
  placement  contiguous (ranks in host order: slice pinning gives every flow of a rack its own
             uplink) and fragmented (a fixed shuffle in which slice pinning puts two flows of
             every rack on one uplink, the seeds' fragmented job placement);
  failure    none, ctsw (ctsw1 fails at --fail-at) and uplink (rtsw1's link to ctsw1 fails);
  routing    ecmp-q1 and ecmp-qN (static E-ECMP: the destination QP in the hash, 1 and --qps
             QPs per connection), pinned (POLICY_ROUTE by destination slice), te (rocesw te's
             routes, re-installed --reinstall-ns after a failure), and ARS on the RTSWs' uplink
             group: flowlet (per_flowlet_quality), spray-q (per_packet_quality) and spray-r
             (per_packet_random), each with receivers that NAK a PSN gap (ooo=nak) and with
             receivers that place out of order (ooo=accept).
Prints a table (markdown) of each run's completion, its ratio to the analytic bound, busbw,
retransmissions, out-of-order packets, maximum PSN distance, deepest queue, PFC frames and
drops, and writes OUT/study.json. --placements, --failures and --routings run a subset.

The bound: the ring's wire time W (2(N-1) steps each putting a chunk of S/N bytes, in MTU
packets with their headers, on a link at the port speed); after a failure at t_f, each rack's
cross-rack flows share the uplinks (and downlinks) it has left, flows split at will:
t_f + (W - t_f) x max(1, flows / links) over the racks.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MTU = 4096
PLACEMENTS = ("contiguous", "fragmented")
FAILURES = ("none", "ctsw", "uplink")
# name: (config kind, ARS assign_mode or None, receivers)
ROUTINGS = {
    "ecmp-q1": ("eecmp", None, "nak"),
    "ecmp-qN": ("eecmp", None, "nak"),
    "pinned": ("pinned", None, "nak"),
    "te": ("te", None, "nak"),
    "flowlet-nak": ("ars", "per_flowlet_quality", "nak"),
    "flowlet-accept": ("ars", "per_flowlet_quality", "accept"),
    "spray-q-nak": ("ars", "per_packet_quality", "nak"),
    "spray-q-accept": ("ars", "per_packet_quality", "accept"),
    "spray-r-nak": ("ars", "per_packet_random", "nak"),
    "spray-r-accept": ("ars", "per_packet_random", "accept"),
}


def version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        m = re.search(r"version\s*:\s*'([^']+)'", f.read())
    return m.group(1) if m else "unknown"


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        if text and text[-1].upper() in units:
            return int(text[:-1]) * units[text[-1].upper()]
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expects bytes, with K, M or G") from None


class Zone:
    """The generated zone's shape: host i is in rack i mod racks, at slot i // racks of its
    RTSW (its port Ethernet(8 x slot)); RTSW uplink k (Ethernet(8 x (hosts + k))) goes to
    ctsw(k+1) (scripts/gen_zone.py)."""

    def __init__(self, racks, hosts, ctsws, speed):
        self.racks, self.hosts, self.ctsws, self.speed = racks, hosts, ctsws, speed
        self.n = racks * hosts

    def rack(self, i):
        return i % self.racks

    def slot(self, i):
        return i // self.racks

    def uplink_port(self, k):
        return f"Ethernet{8 * (self.hosts + k)}"

    def host_ip(self, i):
        return f"10.1.0.{1 + 2 * i}"

    def cross_flows(self, order):
        """(source, destination) of each ring hop between racks."""
        hops = [(order[k], order[(k + 1) % len(order)]) for k in range(len(order))]
        return [(s, d) for s, d in hops if self.rack(s) != self.rack(d)]

    def pinned_load(self, order):
        """{(rack, uplink): flows} under slice pinning: destination d takes uplink slot(d)."""
        load = {}
        for s, d in self.cross_flows(order):
            key = (self.rack(s), self.slot(d) % self.ctsws)
            load[key] = load.get(key, 0) + 1
        return load


def fragmented_order(z):
    """A fixed shuffle of the hosts in which slice pinning puts two flows (and no more) on one
    uplink of every rack: the seeds' fragmented placement."""
    rng = random.Random(1)
    for _ in range(100000):
        order = list(range(z.n))
        rng.shuffle(order)
        load = z.pinned_load(order)
        if all(max((v for (r, _), v in load.items() if r == rr), default=0) == 2
               for rr in range(z.racks)):
            return order
    sys.exit("fabric_study.py: no fragmented placement found for this zone")


def write_variant(zdir, out, edit):
    """A copy of the zone whose RTSW configs pass through edit(rack, text)."""
    os.makedirs(out, exist_ok=True)
    for name in sorted(os.listdir(zdir)):
        with open(os.path.join(zdir, name)) as f:
            text = f.read()
        if name.startswith("rtsw"):
            text = edit(int(name[4:-5]) - 1, text)
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    return os.path.join(out, "zone.yaml")


def pinned_edit(z):
    """Slice pinning: a POLICY_ROUTE per RTSW host port and remote destination; a destination
    at slot k of its rack takes uplink k (mod the CTSWs), as the seeds' path pinning does."""
    def edit(r, text):
        nh = [line.split('"')[1].split("|")[1] for line in text.splitlines()
              if line.strip().startswith('"Ethernet') and "|10.254." in line]
        lines = ["POLICY_ROUTE:"]
        for p in range(z.hosts):
            for d in range(z.n):
                if z.rack(d) != r:
                    lines.append(f'  "Ethernet{8 * p}|{z.host_ip(d)}/32": '
                                 f'{{nexthop: "{nh[z.slot(d) % z.ctsws]}"}}')
        return text + "\n".join(lines) + "\n"
    return edit


def ars_edit(z, mode, idle):
    """ARS on the RTSWs' uplink group for RoCE (UDP 4791). Ports are sampled every 1 us; the
    load's top band is a full port's bytes in that time, the queue's top band 4 us of it; each
    RTSW has its own random seed (rack + 1), so ties are not broken alike on every rack."""
    full = z.speed * 1000 // 8 // 1000000  # bytes per us at the port speed (Mb/s)

    def edit(r, text):
        ars = ("ARS_PROFILE:\n"
               f"  default: {{sampling_interval: 1, past_load_max_value: {full}, "
               f"future_load_max_value: {4 * full}, random_seed: {r + 1}}}\n"
               "ARS_OBJECT:\n"
               f"  roce: {{assign_mode: {mode}, flowlet_idle_time: {idle}, "
               "match_l4_dst_port: 4791}\n")
        text, n = re.subn(r"(  uplinks: \{nexthop: \"[^\"]+\"[^}]*)\}",
                          r"\1, ars_object: roce}", text)
        if n != 1:
            sys.exit("fabric_study.py: no uplinks group in an RTSW config")
        return text.replace("NEXTHOP_GROUP:\n", ars + "NEXTHOP_GROUP:\n")
    return edit


def wire_bound_ns(n, size, speed):
    """2(N-1) steps, each a chunk of S/N bytes in MTU packets on a link: per packet 58 bytes
    of Ethernet, IPv4, UDP, BTH and ICRC, 16 more for the first's RETH, 24 of FCS, preamble
    and inter-frame gap (docs/replay.md, "Closed-loop hosts")."""
    chunk = size // n
    pkts = [min(MTU, chunk - i) for i in range(0, chunk, MTU)]
    bits = sum((58 + (16 if i == 0 else 0) + p + 24) * 8 for i, p in enumerate(pkts))
    return 2 * (n - 1) * bits * 1000 / speed


def failure_factor(z, order, failure):
    """The slowest rack's cross-rack flows over the links it has left, splittable: with ctsw1
    down every rack has ctsws - 1 uplinks and downlinks, with rtsw1's uplink down rack 0
    does."""
    flows = z.cross_flows(order)
    worst = 1.0
    for r in range(z.racks):
        links = z.ctsws - (1 if failure == "ctsw" or (failure == "uplink" and r == 0) else 0)
        out = sum(1 for s, _ in flows if z.rack(s) == r)
        into = sum(1 for _, d in flows if z.rack(d) == r)
        worst = max(worst, max(out, into) / links)
    return worst


def metrics(out):
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    c = s["collective"]
    depth = pfc = 0
    for sw in s["switches"]:
        for p in sw["ports"]:
            depth = max([depth] + [q["max_depth_bytes"] for q in p["queues"]])
            pfc += sum(v for k, v in p["pfc"].items() if k.endswith("_TX_PKTS"))
    return {"complete": c["complete"], "time_ns": c["time_ns"],
            "busbw_GBps": c["busbw_GBps"] if c["complete"] else None,
            "transfers": c["transfers"], "transfers_arrived": c["transfers_arrived"],
            "incomplete_reason": c.get("incomplete_reason"),
            "retransmitted": c["retransmitted"], "timeouts": c["timeouts"],
            "naks": sum(q["naks_rx"] for q in c["qps"]),
            "ooo_packets": c.get("ooo_packets", 0),
            "ooo_max_distance": c.get("ooo_max_distance", 0),
            "reorder_max_packets": c.get("reorder_max_packets", 0),
            "max_queue_bytes": depth, "pfc_frames": pfc, "drops": sum(s["drops"].values())}


def cell(run):
    m = run
    time = f"{m['time_ns'] / 1e3:.1f}" if m["complete"] else \
        f"stalled ({m['transfers_arrived']}/{m['transfers']})"
    ratio = f"{m['time_ns'] / m['bound_ns']:.2f}" if m["complete"] else "-"
    bus = f"{m['busbw_GBps']:.1f}" if m["complete"] else "-"
    return [m["placement"], m["failure"], m["routing"], time, ratio, bus, str(m["retransmitted"]),
            str(m["ooo_packets"]), str(m["ooo_max_distance"]),
            f"{m['max_queue_bytes'] / 1024:.0f}", str(m["pfc_frames"]), str(m["drops"])]


HEAD = ["placement", "failure", "routing", "time us", "x bound", "busbw GB/s", "retx",
        "OOO pkts", "max PSN dist", "max queue KiB", "PFC frames", "drops"]


def table(rows):
    cells = [HEAD] + [cell(r) for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(len(HEAD))]
    lines = []
    for k, c in enumerate(cells):
        lines.append("| " + " | ".join(x.ljust(w[i]) for i, x in enumerate(c)) + " |")
        if k == 0:
            lines.append("|" + "|".join("-" * (x + 2) for x in w) + "|")
    return "\n".join(lines)


def subset(ap, text, allowed, what):
    names = allowed if text is None else text.split(",")
    bad = [x for x in names if x not in allowed]
    if bad:
        ap.error(f"--{what}: unknown {', '.join(bad)} (expects some of {','.join(allowed)})")
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"fabric_study.py {version()}")
    ap.add_argument("--out", required=True, help="directory for the zone, the runs and study.json")
    ap.add_argument("--rocesw", default=os.path.join(ROOT, "build", "rocesw"),
                    help="the rocesw binary (default build/rocesw of this tree)")
    ap.add_argument("--racks", type=int, default=4, help="rack switches (default 4)")
    ap.add_argument("--hosts", type=int, default=4, help="hosts per rack (default 4)")
    ap.add_argument("--ctsws", type=int, default=4, help="cluster switches (default 4)")
    ap.add_argument("--speed", type=int, default=400000, help="Mb/s (default 400000)")
    ap.add_argument("--size", default="16M", type=size_bytes,
                    help="AllReduce size (K/M/G; default 16M)")
    ap.add_argument("--qps", type=int, default=4, help="QPs per connection of ecmp-qN (default 4)")
    ap.add_argument("--idle", type=int, default=256,
                    help="ARS flowlet idle time, us (default 256, SONiC's default)")
    ap.add_argument("--rto", type=int,
                    help="the QPs' retransmission timeout, ns (default: the transport's, 67.1 ms)")
    ap.add_argument("--fail-at", type=int, default=100000, help="ns (default 100000)")
    ap.add_argument("--reinstall-ns", type=int, default=100000,
                    help="TE's re-install delay after a failure, ns (default 100000)")
    ap.add_argument("--placements", help=f"comma-separated subset of {','.join(PLACEMENTS)}")
    ap.add_argument("--failures", help=f"comma-separated subset of {','.join(FAILURES)}")
    ap.add_argument("--routings", help=f"comma-separated subset of {','.join(ROUTINGS)}")
    a = ap.parse_args()
    placements = subset(ap, a.placements, PLACEMENTS, "placements")
    failures = subset(ap, a.failures, FAILURES, "failures")
    routings = subset(ap, a.routings, list(ROUTINGS), "routings")
    if a.ctsws < 2 or a.racks < 2:
        ap.error("--racks and --ctsws must be at least 2")
    z = Zone(a.racks, a.hosts, a.ctsws, a.speed)
    size = a.size
    if size % (z.n * MTU):
        ap.error(f"--size must be a multiple of {z.n} ranks x {MTU} bytes")
    if not os.access(a.rocesw, os.X_OK):
        sys.exit(f"fabric_study.py: {a.rocesw}: not an executable (build first, or --rocesw)")

    zdir = os.path.join(a.out, "zone")
    modes = sorted({m for _, m, _ in ROUTINGS.values() if m})
    for old in ["zone", "zone-pinned", "runs"] + [f"zone-{m}" for m in modes]:
        shutil.rmtree(os.path.join(a.out, old), ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_zone.py"), "--racks", str(a.racks),
                    "--hosts", str(a.hosts), "--ctsws", str(a.ctsws), "--speed", str(a.speed),
                    "--out", zdir], check=True, stdout=subprocess.DEVNULL)
    zones = {"eecmp": os.path.join(zdir, "zone.yaml"), "te": os.path.join(zdir, "zone.yaml"),
             "pinned": write_variant(zdir, os.path.join(a.out, "zone-pinned"), pinned_edit(z))}
    for mode in modes:
        zones[mode] = write_variant(zdir, os.path.join(a.out, f"zone-{mode}"),
                                    ars_edit(z, mode, a.idle))
    orders = {"contiguous": list(range(z.n)), "fragmented": fragmented_order(z)}
    wire = wire_bound_ns(z.n, size, a.speed)
    eecmp = ["--hash-policy", os.path.join(ROOT, "config", "hash-policies.yaml:eecmp")]
    fail_arg = {"none": [], "ctsw": ["--fail", f"ctsw1@{a.fail_at}"],
                "uplink": ["--fail", f"rtsw1|{z.uplink_port(0)}@{a.fail_at}"]}

    rows = []
    print(f"ring AllReduce of {size} bytes over {z.n} ranks; {a.racks} racks x {a.hosts} hosts, "
          f"{a.ctsws} CTSWs, {a.speed // 1000}G; wire bound {wire / 1e3:.1f} us; failures at "
          f"{a.fail_at / 1e3:g} us", file=sys.stderr)
    for placement in placements:
        ranks = ":".join(f"h{i}" for i in orders[placement])
        for failure in failures:
            factor = failure_factor(z, orders[placement], failure)
            bound = wire if failure == "none" else a.fail_at + (wire - a.fail_at) * factor
            for routing in routings:
                kind, mode, ooo = ROUTINGS[routing]
                qps = a.qps if routing == "ecmp-qN" else 1
                spec = f"ring,size={size},ranks={ranks},qps={qps},ooo={ooo}"
                if a.rto:
                    spec += f",rto={a.rto}"
                extra = list(fail_arg[failure])
                if kind == "eecmp":
                    extra += eecmp
                if kind == "te":
                    extra += ["--te"]
                    if failure != "none":
                        extra += ["--te-reinstall-ns", str(a.reinstall_ns)]
                name = f"{placement}-{failure}-{routing}"
                out = os.path.join(a.out, "runs", name)
                os.makedirs(out, exist_ok=True)
                cmd = [a.rocesw, "replay", "--config", zones[mode or kind], "--collective", spec,
                       "--out", out, "--quiet", "--captures", "none", *extra]
                print(f"== {name}", file=sys.stderr)
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"{' '.join(cmd)}: {r.stderr}")
                m = metrics(out)
                m.update({"placement": placement, "failure": failure,
                          "routing": routing.replace("qN", f"q{a.qps}"), "receivers": ooo,
                          "qps": qps, "bound_ns": bound, "wire_ns": wire, "command": cmd})
                rows.append(m)
    print(table(rows))
    with open(os.path.join(a.out, "study.json"), "w") as f:
        json.dump({"version": version(), "racks": a.racks, "hosts": a.hosts, "ctsws": a.ctsws,
                   "speed_mbps": a.speed, "size": size, "qps": a.qps, "idle_us": a.idle,
                   "fail_at_ns": a.fail_at, "reinstall_ns": a.reinstall_ns,
                   "orders": {k: [f"h{i}" for i in v] for k, v in orders.items()},
                   "runs": rows}, f, indent=1)


if __name__ == "__main__":
    main()
