"""The HTML pages in headless chromium (tests/py/pages.py): a one-switch replay with ECN marks,
`rocesw report compare` over several zone runs (shared axes, every run's values), a closed-loop
run's section, a 48-switch zone drawn in aggregate (heat maps, utilization per tier, top
links), and the compare command's --help and errors."""
import json
import math
import os
import subprocess
import sys
import unittest

from pages import blocks, check_replay_page, open_page, wire_util
from common import ROCESW, ROOT, tmpdir

ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")
POLICIES = os.path.join(ROOT, "config", "hash-policies.yaml")


def run(*args):
    r = subprocess.run([ROCESW, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"rocesw {' '.join(args)}: {r.stderr}")
    return r


class Pages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.ring = os.path.join(cls.dir, "ring")
        run("gen", "--pattern", "ring", "--hosts", "8", "--message", "262144", "--qps", "2",
            "--qp-mode", "split", "--out", cls.ring)
        cls.runs = []
        for policy in ("five_tuple", "dest_qp"):
            out = os.path.join(cls.dir, policy)
            run("replay", "--quiet", "--config", ZONE, "--in-dir", cls.ring, "--hash-policy",
                f"{POLICIES}:{policy}", "--out", out)
            cls.runs.append((policy, out))

    def test_one_switch_with_ecn(self):
        """pcap-tests/07's incast through one switch with a step WRED profile: ECN marks over
        time sum to summary.json's marked packets; queues, utilization, completion as in
        check_replay_page."""
        case = os.path.join(ROOT, "pcap-tests", "07-ecn-incast")
        gen, out = os.path.join(self.dir, "incast"), os.path.join(self.dir, "ecn")
        run("gen", "--pattern", "incast", "--hosts", "3", "--root", "2", "--message", "262144",
            "--speed", "100000", "--out", gen)
        run("replay", "--quiet", "--config", os.path.join(case, "config.yaml"), "--in",
            f"Ethernet0={gen}/h0.pcap", "--in", f"Ethernet8={gen}/h1.pcap", "--out", out)
        got = open_page(self, os.path.join(out, "report.html"), "replay-one-switch-ecn")
        s = check_replay_page(self, got, out)
        marked = sum(q["ecn_marked_packets"] for p in s["ports"] for q in p["queues"])
        self.assertGreater(marked, 0, "the case marks packets")
        self.assertGreater(len(got["charts"]["ecn-marks"]["data"][1]), 0)

    def test_sampled_queues_never_held(self):
        """Sampled every second, a run of microseconds is sampled once, at 0, before anything
        ran: no queue is listed, and the queue chart says they were sampled (with the period)
        but held nothing at a period's start, with summary.json's deepest queue; not that
        sampling was off."""
        out = os.path.join(self.dir, "sampled")
        run("replay", "--quiet", "--config", ZONE, "--in-dir", self.ring, "--sample-ns",
            "1000000000", "--out", out)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["queue_sample_ns"], 1000000000)
        with open(os.path.join(out, "events.jsonl")) as f:
            self.assertNotIn('"queue_depth"', f.read())
        got = open_page(self, os.path.join(out, "report.html"), "replay-sampled-empty")
        spec = {b.get("id"): b for b in blocks(got["spec"]) if b.get("id")}
        empty = spec["queue-depth"]["empty"]
        self.assertIn("every 1000000000 ns", empty)
        self.assertNotIn("Not sampled", empty)
        deepest = max(q["max_depth_bytes"] for sw in s["switches"] for p in sw["ports"]
                      for q in p["queues"])
        self.assertIn(f" {deepest} B", empty)

    def test_compare(self):
        """Two zone runs on one page: each run's charts hold its own values, and each kind of
        chart has the same x range and y maximum in every run."""
        page = os.path.join(self.dir, "compare.html")
        run("report", "compare", *[f"{n}={d}" for n, d in self.runs], "--out", page)
        got = open_page(self, page, "compare")
        for i, (_, d) in enumerate(self.runs):
            check_replay_page(self, got, d, suffix=f"-{i}")
        for kind in ("queue-depth", "util-tier2"):
            ids = [f"{kind}-{i}" for i in range(len(self.runs))]
            self.assertEqual(len({tuple(got["charts"][c]["y"]) for c in ids}), 1, kind)
        xr = {tuple(got["charts"][f"queue-depth-{i}"]["x"]) for i in range(len(self.runs))}
        self.assertEqual(len(xr), 1, "one time axis")
        # the overlaid completion CDFs: run i's fraction of flows done by each x
        cdf = got["charts"]["fct-cdf"]
        self.assertEqual(cdf["series"][1:], [n for n, _ in self.runs])
        for i, (_, d) in enumerate(self.runs):
            with open(os.path.join(d, "summary.json")) as f:
                flows = json.load(f)["flows"]
            done = [f["completion_ns"] for f in flows if f["completion_ns"] is not None]
            for x, y in zip(cdf["data"][0], cdf["data"][i + 1]):
                want = sum(1 for c in done if c <= round(x * 1e3)) / len(flows)
                if y is None:
                    self.assertEqual(want, 0)
                else:
                    self.assertAlmostEqual(y, want)
        # axis and legend numbers: trailing zeros of a fraction dropped, never an integer's
        self.assertEqual(got["fmt"], ["1200", "1.5 kB", "2 kB", "120 B", "45.5 %", "25000 µs"])
        head = got["tables"]["overview"][0]
        self.assertEqual(head[1:], [n for n, _ in self.runs])

    def test_closed_loop_section(self):
        out = os.path.join(self.dir, "loop")
        run("replay", "--quiet", "--config", ZONE, "--out", out, "--collective",
            "ring,size=256K,chunk=64K")
        with open(os.path.join(out, "summary.json")) as f:
            c = json.load(f)["collective"]
        got = open_page(self, os.path.join(out, "report.html"), "replay-closed-loop")
        steps = got["charts"]["step-done"]
        self.assertEqual(steps["data"][0], list(range(len(c["step_done_ns"]))))
        self.assertEqual(steps["data"][1], [t / 1e3 for t in c["step_done_ns"]])
        table = dict(r[:2] for r in got["tables"]["collective"][1:])
        self.assertEqual(table["busbw_GBps"], f"{c['busbw_GBps']:.2f} GB/s")
        self.assertEqual(table["retransmitted"], str(c["retransmitted"]))
        self.assertEqual(table["cnps"], str(c["cnps"]))

    def test_zone_at_scale(self):
        """A zone of 48 switches (scripts/gen_zone.py: 32 RTSW x 2 hosts, 16 CTSW) is drawn in
        aggregate, each value recomputed here from summary.json: heat maps of the fabric (per
        CTSW and RTSW, each direction: the link's wire utilization) and of the racks (the busiest
        host link of each rack, each direction) instead of the topology; per tier the CDF of
        utilization and its nearest-rank percentiles; the 20 link directions with the most bytes;
        flows per uplink as a histogram; the page stays small."""
        zone = os.path.join(self.dir, "z48")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_zone.py"), "--racks",
                        "32", "--hosts", "2", "--ctsws", "16", "--out", zone], check=True,
                       capture_output=True)
        out = os.path.join(self.dir, "z48-run")
        run("replay", "--quiet", "--config", os.path.join(zone, "zone.yaml"), "--captures", "none",
            "--collective", "alltoall,size=512K,ranks=32,qps=2", "--out", out)
        page = os.path.join(out, "report.html")
        self.assertLess(os.path.getsize(page), 400_000)
        got = open_page(self, page, "replay-zone-48")
        s = check_replay_page(self, got, out)
        spec = {b.get("id"): b for b in blocks(got["spec"]) if b.get("id")}
        self.assertNotIn("topology", spec)
        t0, t1 = s["start_ns"], s["end_ns"]
        leaves = {(l["b"] if "|" not in l["a"] else l["a"]).split("|")[0]
                  for l in s["links"] if ("|" in l["a"]) != ("|" in l["b"])}
        rtsw = [sw["name"] for sw in s["switches"] if sw["name"] in leaves]
        ctsw = [sw["name"] for sw in s["switches"] if sw["name"] not in leaves]
        node = lambda end: end.split("|")[0]
        dirs = []
        for link in s["links"]:
            for d in link["directions"]:
                a, b = node(d["from"]), node(d["to"])
                tier = ("host → leaf" if "|" not in d["from"] else "leaf → host"
                        if "|" not in d["to"] else "up: leaf → spine" if a in leaves
                        else "down: spine → leaf")
                dirs.append(dict(d, tier=tier, a=a, b=b, util=wire_util(
                    d["bytes"], d["frames"], link["speed"], t0, t1)))
        # heat maps: what each cell was coloured by
        want = {"fabric-up": [[None] * len(rtsw) for _ in ctsw],
                "fabric-down": [[None] * len(rtsw) for _ in ctsw],
                "racks": [[None] * len(rtsw) for _ in range(2)]}
        for d in dirs:
            cell = {"up: leaf → spine": ("fabric-up", ctsw.index(d["b"]) if d["b"] in ctsw else 0,
                                         d["a"]),
                    "down: spine → leaf": ("fabric-down", ctsw.index(d["a"]) if d["a"] in ctsw
                                           else 0, d["b"]),
                    "host → leaf": ("racks", 0, d["b"]), "leaf → host": ("racks", 1, d["a"])}
            m, r, leaf = cell[d["tier"]]
            c = rtsw.index(leaf)
            old = want[m][r][c]
            want[m][r][c] = d["util"] if old is None else max(old, d["util"])
        for m, cells in want.items():
            h = got["heatmaps"][m]
            self.assertTrue(h["canvas"], m)
            self.assertEqual(h["cols"], rtsw)
            self.assertEqual(h["rows"],
                             ctsw if m != "racks" else ["host → leaf", "leaf → host"])
            for r, row in enumerate(cells):
                for c, v in enumerate(row):
                    if v is None:
                        self.assertIsNone(h["values"][r][c], (m, r, c))
                    else:
                        self.assertAlmostEqual(h["values"][r][c], v, delta=0.0051, msg=(m, r, c))
        self.assertTrue(any(v and v > 1 for row in want["fabric-up"] for v in row), "traffic")
        # the CDF per tier: the fraction of the tier's directions at or below each x
        cdf = got["charts"]["util-cdf"]
        self.assertEqual(cdf["y"], [0, 1])
        tiers = cdf["series"][1:]
        self.assertEqual(tiers, ["host → leaf", "leaf → host", "up: leaf → spine",
                                 "down: spine → leaf"])
        for k, tier in enumerate(tiers):
            u = [d["util"] for d in dirs if d["tier"] == tier]
            for x, y in zip(cdf["data"][0], cdf["data"][k + 1]):
                lo = sum(1 for v in u if v <= x - 1e-6) / len(u)
                hi = sum(1 for v in u if v <= x + 1e-6) / len(u)
                self.assertTrue(lo - 1e-6 <= y <= hi + 1e-6, (tier, x, y, lo, hi))
        rows = got["tables"]["util-dist"][1:]
        self.assertEqual([r[0] for r in rows], tiers)
        for r in rows:
            u = sorted(d["util"] for d in dirs if d["tier"] == r[0])
            rank = lambda p: u[max(1, math.ceil(p * len(u))) - 1]
            self.assertEqual(int(r[1]), len(u))
            for got_v, v in zip(r[3:8], [u[0], rank(.5), rank(.9), rank(.99), u[-1]]):
                self.assertAlmostEqual(float(got_v), v, delta=0.0051, msg=r)
        # the 20 link directions with the most bytes, ties in the links' order
        top = sorted(range(len(dirs)), key=lambda i: (-dirs[i]["bytes"], i))[:20]
        rows = got["tables"]["util-top"][1:]
        self.assertEqual([(r[0], r[1], r[3]) for r in rows],
                         [(dirs[i]["from"], dirs[i]["to"], f"{dirs[i]['bytes'] / 1e6:.3f}")
                          for i in top])
        # flows per uplink: how many uplinks carried 0, 1, 2... flows
        on = {(d["from"], d["to"]): 0 for d in dirs if d["tier"] == "up: leaf → spine"}
        for f in s["flows"]:
            for hop in f["path"]:
                if (hop["from"], hop["to"]) in on:
                    on[(hop["from"], hop["to"])] += 1
        hist = [sum(1 for n in on.values() if n == k) for k in range(max(on.values()) + 1)]
        self.assertEqual(got["charts"]["flows-uplink"]["data"][1], hist)
        self.assertEqual(spec["flows-uplink"]["categories"], [str(k) for k in range(len(hist))])
        shared = sorted((n for n in on.values() if n >= 2), reverse=True)[:20]
        rows = got["tables"].get("flow-collisions", [[]])[1:]
        self.assertEqual([int(r[1]) for r in rows], shared)

    def test_compare_cli(self):
        r = subprocess.run([ROCESW, "report", "compare", "--help"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: rocesw report compare RUN_DIR... --out FILE.html", r.stdout)
        r = subprocess.run([ROCESW, "report", "compare", self.runs[0][1]], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--out FILE is required", r.stderr)
        r = subprocess.run([ROCESW, "report", "compare", self.dir + "/nope", "--out",
                            os.path.join(self.dir, "x.html")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope/summary.json", r.stderr)


if __name__ == "__main__":
    unittest.main()
