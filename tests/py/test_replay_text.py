"""What `rocesw replay` prints on stdout. A zone of 48 switches (scripts/gen_zone.py: 32 RTSW with
2 hosts each, 16 CTSW) is shown in aggregate, each table checked against summary.json,
recomputed here:
- the hottest link directions are the N with the most bytes (ties in the links' order), with
  their bytes, frames and wire utilization; --top N sets N;
- the deepest queues are the N with the largest max_depth_bytes (ties in the ports' order);
- per tier (host → leaf, leaf → host, up, down) the count, idle directions and the nearest-rank
  percentiles of utilization;
- totals (frames, PFC, ECN) and the conservation line; the whole output stays short.
A zone of 6 switches (config/zone-2stage.yaml) keeps a line per port and per host, and
`--ports top` shows it in aggregate; `--ports all` brings the port table back at scale.
"""
import json
import math
import os
import subprocess
import sys
import unittest

from common import ROCESW, ROOT, tmpdir
from pages import wire_util

RACKS, HOSTS, CTSWS = 32, 2, 16


def replay(config, out, *extra):
    r = subprocess.run([ROCESW, "replay", "--quiet", "--config", config, "--captures", "none",
                        "--out", out, *extra], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"replay failed ({r.returncode}): {r.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return r.stdout, json.load(f)


def table(text, title):
    """The rows of the SONiC-style table under the line starting with title: cells split on two
    or more spaces."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    head = lines[start + 1].split("  ")
    assert set(lines[start + 2]) <= {"-", " "}, lines[start + 2]
    rows = []
    for line in lines[start + 3:]:
        if not line.strip():
            break
        rows.append([c.strip() for c in line.split("  ") if c.strip()])
    return [h.strip() for h in head if h.strip()], rows


def tier_of(leaves, frm, to):
    if "|" not in frm:
        return "host → leaf"
    if "|" not in to:
        return "leaf → host"
    a, b = frm.split("|")[0] in leaves, to.split("|")[0] in leaves
    return "up: leaf → spine" if a and not b else "down: spine → leaf" if b and not a \
        else "switch → switch"


def directions(s):
    leaves = {(l["b"] if "|" not in l["a"] else l["a"]).split("|")[0]
              for l in s["links"] if ("|" in l["a"]) != ("|" in l["b"])}
    out = []
    for link in s["links"]:
        for d in link["directions"]:
            out.append(dict(d, tier=tier_of(leaves, d["from"], d["to"]),
                            util=wire_util(d["bytes"], d["frames"], link["speed"], s["start_ns"],
                                           s["end_ns"])))
    return out


def nearest_rank(v, p):
    return v[max(1, math.ceil(p * len(v))) - 1]


class ReplayText(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        zone = os.path.join(cls.dir, "zone")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_zone.py"), "--racks",
                        str(RACKS), "--hosts", str(HOSTS), "--ctsws", str(CTSWS), "--out", zone],
                       check=True, capture_output=True)
        cls.zone = os.path.join(zone, "zone.yaml")
        cls.text, cls.s = replay(cls.zone, os.path.join(cls.dir, "z48"), "--collective",
                                 f"ring,size=512K,ranks={RACKS},qps=2")

    def test_hottest_links_are_the_largest_by_bytes(self):
        dirs = directions(self.s)
        want = sorted(range(len(dirs)), key=lambda i: (-dirs[i]["bytes"], i))
        for n, text in ((10, self.text), (3, None)):
            if text is None:
                text, _ = replay(self.zone, os.path.join(self.dir, "top3"), "--collective",
                                 f"ring,size=512K,ranks={RACKS},qps=2", "--top", str(n))
            head, rows = table(text, "Hottest link directions")
            self.assertEqual(head, ["from", "to", "tier", "MB", "frames", "util %", "PFC sent"])
            self.assertIn(f"top {n} of {len(dirs)} by bytes", text)
            self.assertEqual(len(rows), n)
            for row, i in zip(rows, want[:n]):
                d = dirs[i]
                self.assertEqual(row[:3], [d["from"], d["to"], d["tier"]])
                self.assertEqual(row[3], f"{d['bytes'] / 1e6:.3f}")
                self.assertEqual(int(row[4]), d["frames"])
                self.assertAlmostEqual(float(row[5]), d["util"], delta=0.0051)
            # the printed bytes are the n largest of every direction's bytes
            largest = sorted((d["bytes"] for d in dirs), reverse=True)[:n]
            self.assertEqual([f"{b / 1e6:.3f}" for b in largest], [r[3] for r in rows])

    def test_deepest_queues(self):
        qs = [(q["max_depth_bytes"], f"{sw['name']}|{p['name']}", q) for sw in self.s["switches"]
              for p in sw["ports"] for q in p["queues"] if q["max_depth_bytes"]]
        want = sorted(range(len(qs)), key=lambda i: (-qs[i][0], i))[:10]
        _, rows = table(self.text, "Deepest queues")
        self.assertIn(f"top {min(10, len(qs))} of {len(qs)} that held a packet", self.text)
        self.assertEqual(len(rows), min(10, len(qs)))
        for row, i in zip(rows, want):
            depth, port, q = qs[i]
            self.assertEqual(row, [port, str(q["queue"]), str(depth), str(q["packets"]),
                                   str(q["ecn_marked_packets"]), str(q["dropped_packets"])])

    def test_utilization_per_tier(self):
        by = {}
        for d in directions(self.s):
            by.setdefault(d["tier"], []).append(d)
        head, rows = table(self.text, "Link utilization per tier")
        self.assertEqual(head, ["tier", "directions", "idle", "min", "p50", "p90", "p99", "max",
                                "mean"])
        self.assertEqual([r[0] for r in rows], ["host → leaf", "leaf → host",
                                                "up: leaf → spine", "down: spine → leaf"])
        for r in rows:
            ds = by[r[0]]
            u = sorted(d["util"] for d in ds)
            self.assertEqual(int(r[1]), len(ds))
            self.assertEqual(int(r[2]), sum(1 for d in ds if d["frames"] == 0))
            want = [u[0], nearest_rank(u, .5), nearest_rank(u, .9), nearest_rank(u, .99), u[-1],
                    sum(u) / len(u)]
            for got, w in zip(r[3:], want):
                self.assertAlmostEqual(float(got), w, delta=0.0051, msg=r)

    def test_totals_and_size(self):
        ports = [p for sw in self.s["switches"] for p in sw["ports"]]
        self.assertIn(f"zone {self.s['zone']}: {RACKS + CTSWS} switches ({RACKS} with hosts), "
                      f"{RACKS * HOSTS} hosts, {len(self.s['links'])} links", self.text)
        self.assertIn(f"switch ports: {sum(p['rx_packets'] for p in ports)} frames received",
                      self.text)
        ecn = sum(q["ecn_marked_packets"] for p in ports for q in p["queues"])
        self.assertIn(f"ECN: {ecn} packets marked", self.text)
        c = self.s["conservation"]
        self.assertIn(f"entered {c['entered']} + PFC generated {c['generated']} = delivered "
                      f"{c['delivered']}", self.text)
        self.assertIn(f"busbw {self.s['collective']['busbw_GBps']:.2f} GB/s", self.text)
        self.assertNotIn("rx_packets", self.text)
        self.assertLess(len(self.text.splitlines()), 80)
        text, _ = replay(self.zone, os.path.join(self.dir, "all"), "--collective",
                         f"ring,size=512K,ranks={RACKS},qps=2", "--ports", "all")
        self.assertEqual(sum(1 for line in text.splitlines() if "|Ethernet" in line), len(ports))

    def test_small_zone_keeps_every_port(self):
        zone = os.path.join(ROOT, "config", "zone-2stage.yaml")
        text, s = replay(zone, os.path.join(self.dir, "small"), "--collective", "ring,size=1M")
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("port "), lines[0])
        self.assertIn("rx_packets", lines[0])
        for sw in s["switches"]:
            for p in sw["ports"]:
                name = f"{sw['name']}|{p['name']}"
                row = next(line for line in lines if line.split()[0] == name)
                self.assertEqual(row.split()[1:5], [str(p["rx_packets"]), str(p["rx_bytes"]),
                                                    str(p["tx_packets"]), str(p["tx_bytes"])])
        self.assertEqual(sum(1 for line in lines if line.startswith("host ")), len(s["hosts"]))
        text, _ = replay(zone, os.path.join(self.dir, "small-top"), "--collective",
                         "ring,size=1M", "--ports", "top", "--top", "4")
        _, rows = table(text, "Hottest link directions")
        self.assertEqual(len(rows), 4)
        r = subprocess.run([ROCESW, "replay", "--config", zone, "--out", self.dir, "--ports",
                            "some"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--ports expects all or top", r.stderr)


if __name__ == "__main__":
    unittest.main()
