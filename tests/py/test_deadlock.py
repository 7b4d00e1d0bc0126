"""PFC deadlock in replay (docs/replay.md, "PFC deadlock"): the zone of config/zone-deadlock,
4 racks and 2 CTSWs with links ctsw1-rtsw1 and ctsw2-rtsw2 failed, an all-to-all on the lossless
priority 3.

The expected cycle is computed here from the zone's own config files, not from rocesw: every
route (STATIC_ROUTE with its backup distance, NEXTHOP_GROUP, POLICY_ROUTE on an ingress port)
is walked for every pair of ranks over every ECMP choice, the turns the paths take (in through
one switch-to-switch link, out through the next) give which egress queue's frames wait on which,
and the cycles of that graph are the buffer dependencies PFC can close (Hu et al., HotNets
2016). The bounce routes have exactly one; up-down routing has none. The bounce run's
report.html draws that cycle on the topology (headless chromium, tests/py/pages.py)."""
import ipaddress
import json
import os
import subprocess
import unittest

import yaml

from common import ROCESW, ROOT, tmpdir
from pages import open_page

ZONES = os.path.join(ROOT, "config", "zone-deadlock")
FAIL = ["ctsw1|Ethernet0", "ctsw2|Ethernet8"]
ALL = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"]
UPDOWN_RANKS = ["h0", "h2", "h3", "h4", "h6", "h7"]  # racks 1, 3, 4: rack 1 never meets rack 2


def load_zone(variant):
    d = os.path.join(ZONES, variant)
    with open(os.path.join(d, "zone.yaml")) as f:
        z = yaml.safe_load(f)
    sw = {}
    for name, s in z["SWITCH"].items():
        with open(os.path.join(d, s["config"])) as f:
            sw[name] = yaml.safe_load(f)
    peer = {}
    for l in z["LINK"]:
        peer[l["a"]] = l["b"]
        peer[l["b"]] = l["a"]
    return sw, peer


def nexthop_ports(cfg, hops):
    neigh = {k.split("|")[1]: k.split("|")[0] for k in cfg.get("NEIGH", {})}
    return [neigh[h] for h in hops]


def route_ports(cfg, entry, down):
    """The ports a route sends on: its usable next hops of the lowest distance."""
    if "nexthop_group" in entry:
        hops = cfg["NEXTHOP_GROUP"][entry["nexthop_group"]]["nexthop"].split(",")
        dist = [0] * len(hops)
    else:
        hops = entry["nexthop"].split(",")
        dist = [int(x) for x in str(entry.get("distance", ",".join("0" * len(hops)))).split(",")]
    ports = nexthop_ports(cfg, hops)
    for d in sorted(set(dist)):
        up = [p for p, dd in zip(ports, dist) if dd == d and p not in down]
        if up:
            return up
    return []


def lpm(table, dst):
    best = None
    for prefix, entry in table.items():
        net = ipaddress.ip_network(prefix)
        if ipaddress.ip_address(dst) in net and (best is None or net.prefixlen > best[0]):
            best = (net.prefixlen, entry)
    return best[1] if best else None


def forward(cfg, in_port, dst, down):
    """Egress ports a switch may choose for dst arriving on in_port (every ECMP member)."""
    policy = {k.split("|")[1]: v for k, v in cfg.get("POLICY_ROUTE", {}).items()
              if k.split("|")[0] == in_port}
    e = lpm(policy, dst)
    if e is not None:
        ports = route_ports(cfg, e, down)
        if ports:
            return ports
    e = lpm(cfg.get("STATIC_ROUTE", {}), dst)
    return route_ports(cfg, e, down) if e else []


def host_ip(h):
    return str(ipaddress.ip_address("10.1.0.1") + 2 * int(h[1:]))


def turns(variant, ranks):
    """(queue, next queue) pairs the pairs' paths take, a queue being 'switch|port'; and the pairs
    with no path."""
    sw, peer = load_zone(variant)
    down = {}
    for f in FAIL:
        for end in (f, peer[f]):
            s, p = end.split("|")
            down.setdefault(s, set()).add(p)
    edges, unreachable = set(), []
    for src in ranks:
        for dst in ranks:
            if src == dst:
                continue
            delivered = []

            def walk(end, prev, ttl):
                s, p = end.split("|")
                for out in forward(sw[s], p, host_ip(dst), down.get(s, set())):
                    q = f"{s}|{out}"
                    if prev:
                        edges.add((prev, q))
                    nxt = peer[q]
                    if "|" not in nxt:
                        delivered.append(nxt == dst)
                    elif ttl:
                        walk(nxt, q, ttl - 1)

            walk(peer[src], None, 6)
            if not delivered or not all(delivered):
                unreachable.append((src, dst))
    return edges, unreachable


def cycles(edges):
    """Every elementary cycle, each once, lowest node first."""
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    found = set()

    def dfs(start, node, path):
        for n in succ.get(node, ()):
            if n == start:
                found.add(tuple(path))
            elif n not in path and n > start:
                dfs(start, n, path + [n])

    for s in sorted(succ):
        dfs(s, s, [s])
    return sorted(found)


def rotations(seq):
    return {tuple(seq[i:] + seq[:i]) for i in range(len(seq))}


def replay(variant, ranks, until):
    out = tmpdir()
    cmd = [ROCESW, "replay", "--config", os.path.join(ZONES, variant, "zone.yaml"),
           "--collective", f"alltoall,size=64M,qps=4,ranks={':'.join(ranks)}",
           "--until", str(until), "--captures", "none", "--quiet", "--out", out]
    for f in FAIL:
        cmd += ["--fail", f + "@0"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(p.stderr)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(out, "events.jsonl")) as f:
        ev = [json.loads(l) for l in f if '"pfc_deadlock' in l]
    return s, ev, p.stdout, out


def members(d):
    return [f"{m['switch']}|{m['port']}" for m in d["cycle"]]


class Deadlock(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        edges, unreach = turns("bounce", ALL)
        cls.expected = cycles(edges)
        assert not unreach, unreach

    def test_walk_finds_one_cycle_out_of_up_down_order(self):
        # ctsw1 detours rack 1 down through rtsw3, which sends it up to ctsw2; ctsw2 detours
        # rack 2 down through rtsw4, which sends it up to ctsw1
        self.assertEqual(len(self.expected), 1)
        self.assertIn(("ctsw1|Ethernet16", "rtsw3|Ethernet24", "ctsw2|Ethernet24",
                       "rtsw4|Ethernet16"), rotations(list(self.expected[0])))

    def test_bounce_deadlocks_with_the_walked_cycle(self):
        s, ev, text, out = replay("bounce", ALL, 3000000)
        self.assertEqual(len(s["deadlocks"]), 1, s["deadlocks"])
        d = s["deadlocks"][0]
        self.assertIn(tuple(members(d)), rotations(list(self.expected[0])))
        self.assertEqual({m["priority"] for m in d["cycle"]}, {3})
        self.assertTrue(all(m["frames"] > 0 for m in d["cycle"]))
        # reported once, after it was held for the hold time, and never broken: checks run
        # every hold / 8 while a cycle is seen, so at the first of those times (a multiple of
        # 62.5 us) at or after formed + hold
        self.assertEqual(s["deadlock_hold_ns"], 500000)
        step = 500000 // 8
        self.assertEqual(d["found_ns"], -(-(d["formed_ns"] + 500000) // step) * step)
        self.assertIsNone(d["broken_ns"])
        self.assertEqual(sum(f["frames"] for f in d["flows"]),
                         sum(m["frames"] for m in d["cycle"]))
        # every flow caught crosses one of the cycle's links
        for f in d["flows"]:
            path = {h["from"] for h in s["flows"][f["flow"]]["path"]}
            self.assertTrue(path & set(members(d)), f)
        self.assertEqual([e["event"] for e in ev], ["pfc_deadlock"])
        self.assertEqual(ev[0]["t"], d["found_ns"])
        self.assertEqual(s["drops"], {})
        self.assertIn("PFC deadlock formed at", text)
        self.check_report(out, d)

    def check_report(self, out, d):
        """report.html draws the cycle on the topology: an arrow per member in wait order, from
        its switch to the switch at the far end of its port in zone.yaml, each arrow ending where
        the next starts; the table lists the members in order and the flows caught."""
        got = open_page(self, os.path.join(out, "report.html"), "deadlock-bounce")
        _, peer = load_zone("bounce")
        hops = sorted(got["deadlock"], key=lambda h: h["order"])
        self.assertEqual([h["order"] for h in hops], list(range(1, len(d["cycle"]) + 1)))
        self.assertEqual([h["port"] for h in hops], members(d))
        for i, h in enumerate(hops):
            self.assertEqual(h["from"], h["port"].split("|")[0])
            self.assertEqual(h["to"], peer[h["port"]].split("|")[0])
            self.assertEqual(h["to"], hops[(i + 1) % len(hops)]["from"])
        rows = got["tables"]["deadlocks"]
        self.assertEqual(rows[1][1], f"{d['formed_ns'] / 1e3:.3f}")
        self.assertEqual(rows[1][5], " → ".join(members(d)))
        self.assertEqual(int(rows[1][6]), len(d["flows"]))
        flows = got["tables"]["deadlock-flows"][1:]
        self.assertEqual([(r[0], int(r[2])) for r in flows],
                         [(f"{f['src']}→{f['dst']} QP {f['dest_qp']}", f["frames"])
                          for f in d["flows"]])

    def test_watchdog_breaks_it_with_its_own_drops(self):
        s, ev, _, out = replay("pfcwd", ALL, 2500000)
        self.assertGreaterEqual(len(s["deadlocks"]), 1)
        d = s["deadlocks"][0]
        self.assertIn(tuple(members(d)), rotations(list(self.expected[0])))
        # detection 1 ms on a 1 ms poll: broken within 2 ms of forming
        self.assertIsNotNone(d["broken_ns"])
        self.assertGreater(d["broken_ns"], d["found_ns"])
        self.assertLessEqual(d["broken_ns"] - d["formed_ns"], 2000000)
        # ended at the first check after the watchdog's first flush (a check at a time sees
        # the zone before that time's events): the next multiple of hold / 8
        with open(os.path.join(out, "events.jsonl")) as f:
            storm = min(e["t"] for e in map(json.loads, f) if e["event"] == "pfcwd")
        step = s["deadlock_hold_ns"] // 8
        self.assertEqual(d["broken_ns"], (storm // step + 1) * step)
        self.assertEqual(list(s["drops"]), ["pfcwd_drop"])
        self.assertEqual(s["conservation"]["lossless_drops"], s["drops"])
        self.assertEqual([e["event"] for e in ev[:2]], ["pfc_deadlock", "pfc_deadlock_end"])

    def test_up_down_routing_has_no_cycle_and_completes(self):
        edges, unreach = turns("updown", ALL)
        self.assertEqual(cycles(edges), [])
        # the price of up-down order with two CTSWs: racks 1 and 2 cannot reach each other
        self.assertEqual(sorted(unreach), sorted(
            [(a, b) for a in ("h0", "h4", "h1", "h5") for b in ("h0", "h4", "h1", "h5")
             if (a in ("h0", "h4")) != (b in ("h0", "h4"))]))
        edges, unreach = turns("updown", UPDOWN_RANKS)
        self.assertEqual(unreach, [])
        s, ev, _, _ = replay("updown", UPDOWN_RANKS, 20000000)
        self.assertEqual(s["deadlocks"], [])
        self.assertEqual(ev, [])
        self.assertTrue(s["collective"]["complete"])
        self.assertEqual(s["drops"], {})


if __name__ == "__main__":
    unittest.main()
