"""`rocesw te` (docs/te.md): on the shipped 2-CTSW zone every flow's path, walked independently
through the written switch configs (POLICY_ROUTE, then STATIC_ROUTE), is loop-free, within the
links' capacity and as good as a brute-force max-min over every up-down path assignment; after a
failure no route uses the failed link; the SONiC and EOS forms parse back to the same routes;
bad input is refused with the reason; replay installs the routes (--te) and re-installs them
after a failure (--te-reinstall-ns)."""
import itertools
import json
import os
import re
import subprocess
import unittest

import yaml

from common import ROCESW, ROOT, tmpdir

ZONE2 = os.path.join(ROOT, "config", "zone-2stage.yaml")
EPS = 1e-6


def te(*args, check=True):
    r = subprocess.run([ROCESW, "te", "--config", ZONE2, *args], capture_output=True, text=True,
                       timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def host_ip(i):
    return f"10.1.0.{1 + 2 * i}"


class Zone:
    """The zone as its files say: switches' ports, neighbours and routes; links; hosts."""

    def __init__(self, zone_path):
        base = os.path.dirname(zone_path)
        with open(zone_path) as f:
            z = yaml.safe_load(f)
        self.hosts = list(z["HOST"])
        self.sw = {}
        for name, v in z["SWITCH"].items():
            with open(os.path.join(base, v["config"])) as f:
                self.sw[name] = yaml.safe_load(f)
        self.links = []  # ((node, port), (node, port), speed Mb/s)
        for lk in z["LINK"]:
            ends = []
            for e in (lk["a"], lk["b"]):
                ends.append(tuple(e.split("|")) if "|" in e else (e, None))
            sw_end = next(e for e in ends if e[1] is not None)
            speed = self.sw[sw_end[0]]["PORT"][sw_end[1]]["speed"]
            self.links.append((ends[0], ends[1], speed))

    def peer(self, node, port):
        """The far end of the link at (node, port) and the link's direction (index, 0 a->b)."""
        for i, (a, b, _) in enumerate(self.links):
            if a == (node, port):
                return b, (i, 0)
            if b == (node, port):
                return a, (i, 1)
        raise AssertionError(f"no link at {node}|{port}")

    def is_host(self, node):
        return node in self.hosts

    def neigh_port(self, sw, ip):
        for k, v in self.sw[sw].get("NEIGH", {}).items():
            port, addr = k.split("|")
            if addr == ip:
                return port
        raise AssertionError(f"{sw}: no neighbour {ip}")

    def walk(self, src, dst):
        """The link directions a packet from host src to host dst takes: a policy route of its
        ingress port first, else the main table's route (one next hop)."""
        dip = host_ip(self.hosts.index(dst))
        (node, port), d = self.peer(src, None)
        dirs, seen = [d], set()
        while not self.is_host(node):
            assert node not in seen, f"loop at {node}: {dirs}"
            seen.add(node)
            cfg = self.sw[node]
            r = cfg.get("POLICY_ROUTE", {}).get(f"{port}|{dip}/32")
            if r is None:
                r = cfg["STATIC_ROUTE"].get(f"{dip}/32")
            assert r and "nexthop" in r and "," not in r["nexthop"], \
                f"{node}: {src}->{dst} is not pinned to one next hop ({r})"
            out = self.neigh_port(node, r["nexthop"])
            (node, port), d = self.peer(node, out)
            dirs.append(d)
        assert node == dst
        return dirs

    def tier(self):
        """1 for switches with hosts, else one more than the lowest neighbour."""
        t = {}
        for a, b, _ in self.links:
            for x, y in ((a, b), (b, a)):
                if self.is_host(x[0]):
                    t[y[0]] = 1
        changed = True
        while changed:
            changed = False
            for a, b, _ in self.links:
                for x, y in ((a, b), (b, a)):
                    if x[0] in t and not self.is_host(y[0]) and y[0] not in t:
                        t[y[0]] = t[x[0]] + 1
                        changed = True
        return t

    def updown_paths(self, src, dst, down=()):
        """Every valley-free simple path from src to dst avoiding the links in down."""
        tier = self.tier()
        out = []

        def go(node, dirs, seen, descending):
            for i, (a, b, _) in enumerate(self.links):
                if i in down:
                    continue
                for (x, y, d) in ((a, b, 0), (b, a, 1)):
                    if x[0] != node or y[0] in seen:
                        continue
                    if self.is_host(y[0]):
                        if y[0] == dst:
                            out.append(dirs + [(i, d)])
                        continue
                    up = tier[y[0]] > tier[node]
                    if tier[y[0]] == tier[node] or (up and descending):
                        continue
                    go(y[0], dirs + [(i, d)], seen | {y[0]}, not up)

        (first, _), d0 = self.peer(src, None)
        go(first, [d0], {src, first}, False)
        return out


def maxmin(paths, demand, cap):
    """Max-min fair rates (progressive filling, each flow capped at its demand) of flows on
    fixed paths; cap maps a link direction to its capacity."""
    rate = [0.0] * len(paths)
    active = set(range(len(paths)))
    left = dict(cap)
    while active:
        share = {}
        for d in {d for f in active for d in paths[f]}:
            n = sum(1 for f in active if d in paths[f])
            share[d] = left[d] / n
        inc = min(min(share[d] for d in paths[f]) for f in active)
        inc = min(inc, min(demand[f] - rate[f] for f in active))
        for f in active:
            rate[f] += inc
            for d in paths[f]:
                left[d] -= inc
        active = {f for f in active if demand[f] - rate[f] > EPS and
                  all(left[d] > EPS for d in paths[f])}
    return sorted(rate)


class Te(unittest.TestCase):
    def run_te(self, spec, *fails):
        out = tmpdir()
        args = ["--collective", spec, "--out", out, "--json"]
        for f in fails:
            args += ["--fail", f]
        res = json.loads(te(*args).stdout)
        return out, res

    def check_optimal(self, spec, fails=(), down=()):
        out, res = self.run_te(spec, *fails)
        z = Zone(os.path.join(out, "zone.yaml"))
        cap = {(i, d): sp for i, (_, _, sp) in enumerate(z.links) for d in (0, 1)}
        flows = [f for f in res["flows"] if f["status"] != "unreachable"]
        demand = [f["demand_mbps"] for f in flows]
        walked = []
        for f in flows:
            dirs = z.walk(f["src"], f["dst"])
            self.assertTrue(all(i not in down for i, _ in dirs), (f, dirs))
            walked.append(dirs)
        # the written routes take each flow where rocesw te says it placed it
        for f, dirs in zip(flows, walked):
            self.assertEqual([p["link"] for p in f["path"]], [i for i, _ in dirs])
        load = {}
        for f, dirs in zip(flows, walked):
            for d in dirs:
                load[d] = load.get(d, 0) + f["demand_mbps"]
        over = any(load[d] > cap[d] + EPS for d in load)
        self.assertEqual(over, res["over_capacity"] > 0, load)
        # brute force: every assignment of up-down paths, the best max-min allocation
        choices = [z.updown_paths(f["src"], f["dst"], down) for f in flows]
        self.assertLessEqual(len(list(itertools.product(*[range(len(c)) for c in choices]))),
                             1 << 14)
        best = max(maxmin(list(p), demand, cap) for p in itertools.product(*choices))
        got = maxmin(walked, demand, cap)
        self.assertAlmostEqual(got[0], best[0], delta=1)  # the worst flow as well served
        self.assertGreaterEqual(sum(got), sum(best) - 1)
        if not over:
            self.assertTrue(all(abs(r - d) < 1 for r, d in zip(sorted(demand), got)))
        return out, res, z

    def test_ring_fits(self):
        _, res, _ = self.check_optimal("ring")
        self.assertEqual(res["placed"], 8)
        self.assertEqual(res["over_capacity"], 0)
        # a route on each RTSW host port, for the one flow entering there; none on the CTSWs
        self.assertEqual(len(res["routes"]), 8)
        self.assertTrue(all(r["switch"].startswith("rtsw") for r in res["routes"]))

    def test_fragmented_ring_and_alltoall(self):
        # ranks two to a rack in an order whose flows share racks at both ends
        self.check_optimal("ring,ranks=h0:h4:h1:h2:h5:h6:h3:h7")
        _, res, _ = self.check_optimal("alltoall,ranks=h0:h1:h2:h3")
        self.assertEqual(len(res["flows"]), 12)
        for f in res["flows"]:
            self.assertAlmostEqual(f["demand_mbps"], 400000 / 3, places=3)

    def test_failure_avoided(self):
        z = Zone(ZONE2)
        ctsw1 = {i for i, (a, b, _) in enumerate(z.links) if "ctsw1" in (a[0], b[0])}
        out, res, wz = self.check_optimal("ring", fails=("ctsw1",), down=ctsw1)
        self.assertEqual({x["link"] for x in res["failed"]}, ctsw1)
        self.assertEqual(res["over_capacity"], 4)  # 800G from each rack on one 400G uplink
        for r in res["routes"]:
            self.assertEqual(r["out_port"], "Ethernet264")  # the uplink to ctsw2
        up = ("rtsw2", "Ethernet256")
        one = {i for i, (a, b, _) in enumerate(z.links) if up in (a, b)}
        _, res2, _ = self.check_optimal("alltoall,ranks=h0:h1:h2:h3", fails=("rtsw2|Ethernet256",),
                                        down=one)
        for f in res2["flows"]:
            self.assertNotIn(next(iter(one)), [p["link"] for p in f["path"]])

    def test_sonic_and_eos_parse_back(self):
        out, res = self.run_te("alltoall,ranks=h0:h1:h2:h3:h4")
        want = {(r["switch"], r["in_port"], r["prefix"], r["nexthop"]) for r in res["routes"]}
        self.assertTrue(want)
        z = Zone(os.path.join(out, "zone.yaml"))
        written, sonic, eos = set(), set(), set()
        for sw, cfg in z.sw.items():
            for k, v in (cfg.get("POLICY_ROUTE") or {}).items():
                port, pfx = k.split("|")
                written.add((sw, port, pfx, v["nexthop"]))
            with open(os.path.join(out, "sonic", sw + ".json")) as f:
                doc = json.load(f)
            for key, rule in doc["ACL_RULE"].items():
                table = doc["ACL_TABLE"][key.split("|")[0]]
                self.assertEqual((table["type"], table["stage"]), ("L3", "ingress"))
                m = re.fullmatch(r"REDIRECT:([\d.]+)\|(\w+)", rule["PACKET_ACTION"])
                self.assertTrue(m, rule)
                self.assertEqual(z.neigh_port(sw, m.group(1)), m.group(2))
                for port in table["ports"]:
                    sonic.add((sw, port, rule["DST_IP"], m.group(1)))
            eos |= {(sw,) + t for t in parse_eos(os.path.join(out, "eos", sw + ".cfg"))}
        self.assertEqual(written, want)
        self.assertEqual(sonic, want)
        self.assertEqual(eos, want)
        r = subprocess.run([ROCESW, "check-config", os.path.join(out, "rtsw1.yaml")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_bad_input(self):
        r = te("--collective", "ring", "--fail", "rtsw1|Ethernet99", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--fail rtsw1|Ethernet99: no switch, host or SWITCH|PORT", r.stderr)
        r = te("--collective", "ring,ranks=12", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("ranks=12: between 2 and the zone's 8 hosts", r.stderr)
        r = te("--collective", "ring,ranks=h0:h99", check=False)
        self.assertIn("no host named 'h99'", r.stderr)
        r = subprocess.run([ROCESW, "te", "--config", os.path.join(ROOT, "config", "rtsw.yaml"),
                            "--collective", "ring"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a zone config", r.stderr)
        r = subprocess.run([ROCESW, "te", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("--fail WHAT", r.stdout)
        r = subprocess.run([ROCESW, "te", "--version"], capture_output=True, text=True)
        self.assertTrue(r.stdout.startswith("rocesw "), r.stdout)

    def test_replay_installs(self):
        def replay(*args):
            out = tmpdir()
            r = subprocess.run([ROCESW, "replay", "--out", out, "--quiet", "--captures", "none",
                                *args], capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "summary.json")) as f:
                return out, json.load(f)
        spec = "ring,size=2M"
        te_dir, _ = self.run_te(spec)
        _, a = replay("--config", ZONE2, "--collective", spec, "--te")
        _, b = replay("--config", os.path.join(te_dir, "zone.yaml"), "--collective", spec)
        # the routes --te installs and the written zone's are the same: the same run
        self.assertEqual(a["collective"]["done_ns"], b["collective"]["done_ns"])
        self.assertTrue(a["collective"]["complete"])
        # wire bound of a ring: 2(N-1) steps of S/N bytes at 400G; what is above it is headers
        # (~2.4 % at MTU 4096) and each step's latency (two 40 m and two 3 m cables, ~0.5 us)
        bound = 2 * 7 * (2 << 20) / 8 * 8 / 400e9 * 1e9
        self.assertLess(a["collective"]["done_ns"], 1.2 * bound)
        _, e = replay("--config", ZONE2, "--collective", spec)
        self.assertLessEqual(a["collective"]["done_ns"], e["collective"]["done_ns"])
        out, c = replay("--config", ZONE2, "--collective", spec, "--te", "--fail", "ctsw1@20us",
                        "--te-reinstall-ns", "30000")
        self.assertTrue(c["collective"]["complete"])
        with open(os.path.join(out, "events.jsonl")) as f:
            ev = [json.loads(x) for x in f if '"install"' in x]
        self.assertEqual(sorted(e["switch"] for e in ev), ["rtsw1", "rtsw2", "rtsw3", "rtsw4"])
        self.assertTrue(all(e["t"] == 50000 for e in ev))
        r = subprocess.run([ROCESW, "replay", "--config", ZONE2, "--out", tmpdir(),
                            "--te-reinstall-ns", "5"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--te-reinstall-ns needs --te", r.stderr)


def parse_eos(path):
    """(in port, prefix, next hop) of each PBR class applied on an interface's input."""
    acl, cls, pol, cur = {}, {}, {}, None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("!"):
                continue
            if m := re.fullmatch(r"ip access-list (\S+)", s):
                cur = ("acl", m.group(1))
            elif m := re.fullmatch(r"class-map type pbr match-any (\S+)", s):
                cur = ("cls", m.group(1))
            elif m := re.fullmatch(r"policy-map type pbr (\S+)", s):
                cur = ("pol", m.group(1))
                pol[m.group(1)] = []
            elif m := re.fullmatch(r"interface (\S+)", s):
                cur = ("if", m.group(1))
            elif m := re.fullmatch(r"\d+ permit ip any (\S+)", s):
                acl[cur[1]] = m.group(1)
            elif m := re.fullmatch(r"match ip access-group (\S+)", s):
                cls[cur[1]] = m.group(1)
            elif m := re.fullmatch(r"class (\S+)", s):
                pol[cur[1]].append([m.group(1), None])
            elif m := re.fullmatch(r"set nexthop (\S+)", s):
                pol[cur[1]][-1][1] = m.group(1)
            elif m := re.fullmatch(r"service-policy type pbr input (\S+)", s):
                for c, nh in pol[m.group(1)]:
                    yield cur[1], acl[cls[c]], nh
            else:
                raise AssertionError(f"{path}: unexpected line '{s}'")


if __name__ == "__main__":
    unittest.main()
