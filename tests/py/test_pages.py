"""The HTML pages in headless chromium (tests/py/pages.py): a one-switch replay with ECN marks,
`rocesw report compare` over several zone runs (shared axes, every run's values), a closed-loop
run's section, and the compare command's --help and errors."""
import json
import os
import subprocess
import unittest

from pages import blocks, check_replay_page, open_page
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
