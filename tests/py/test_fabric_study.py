"""The fabric study's headline orderings (scripts/fabric_study.py, docs/study.md) on its zone
with a small AllReduce, each run compared with the analytic bound computed here:
- static ECMP puts two ring flows on one uplink (read from the flows' paths): the ring takes
  that many times its wire bound; spraying with receivers that place out of order reaches the
  bound with no retransmission; with strict receivers it goes back N and is slower;
- slice pinning holds the bound on the contiguous placement and loses half of it on the
  fragmented one, where (computed here from the placement) two flows share a pinned uplink;
- after a CTSW failure, TE re-installed beats pinning; neither beats the failure's bound."""
import json
import os
import subprocess
import sys
import unittest

from common import ROCESW, ROOT, tmpdir
from ring_bound import MTU, data_frame_len, ring_wire_bound_ns, wire_ns

STUDY = os.path.join(ROOT, "scripts", "fabric_study.py")
RACKS = HOSTS = CTSWS = 4
N = RACKS * HOSTS
SIZE = 4 << 20
SPEED = 400000
FAIL_AT = 40000
# a step's latency on top of its wire time: the last packet's propagation over 3 m, 40 m, 40 m
# and 3 m (5 ns/m) and a full frame's store-and-forward at each of the 3 switches
STEP_LATENCY = 5 * (3 + 40 + 40 + 3) + 3 * wire_ns(data_frame_len(MTU, False), SPEED)


def rack(h):
    return int(h[1:]) % RACKS


def slot(h):
    return int(h[1:]) // RACKS


class FabricStudy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.runs = {}
        cls.orders = {}
        for name, args in (
                ("a", ["--placements", "contiguous", "--failures", "none", "--routings",
                       "ecmp-q1,pinned,spray-q-accept,spray-q-nak"]),
                ("b", ["--placements", "fragmented", "--failures", "none,ctsw",
                       "--routings", "pinned,te"])):
            out = os.path.join(cls.dir, name)
            r = subprocess.run([sys.executable, STUDY, "--out", out, "--rocesw", ROCESW,
                                "--size", "4M", "--fail-at", str(FAIL_AT),
                                "--reinstall-ns", "20000", *args],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise AssertionError(r.stderr)
            with open(os.path.join(out, "study.json")) as f:
                s = json.load(f)
            cls.orders.update(s["orders"])
            for run in s["runs"]:
                run["dir"] = os.path.join(out, "runs", "-".join(
                    (run["placement"], run["failure"], run["routing"])))
                cls.runs[(run["placement"], run["failure"], run["routing"])] = run
        cls.wire = ring_wire_bound_ns(N, SIZE, SPEED)
        # the uncongested ring: the wire bound plus each of its 2(N-1) steps' latency
        cls.ring = cls.wire + 2 * (N - 1) * STEP_LATENCY

    def run_of(self, placement, failure, routing):
        run = self.runs[(placement, failure, routing)]
        self.assertTrue(run["complete"], run)
        return run

    def most_flows_on_a_fabric_link(self, run):
        """The most data flows (more than a chunk's worth of packets) that share one RTSW-CTSW
        link direction, from the flows' paths in summary.json."""
        with open(os.path.join(run["dir"], "summary.json")) as f:
            s = json.load(f)
        per = {}
        for fl in s["flows"]:
            if fl["packets_in"] < 2 * (N - 1) * (SIZE // N // MTU):
                continue  # ACKs: one per 16 packets
            for hop in fl["path"]:
                if "ctsw" in hop["from"] or "ctsw" in hop["to"]:
                    per[(hop["from"], hop["to"])] = per.get((hop["from"], hop["to"]), 0) + 1
        return max(per.values())

    def test_spraying_with_accepting_receivers_beats_a_collision(self):
        static = self.run_of("contiguous", "none", "ecmp-q1")
        k = self.most_flows_on_a_fabric_link(static)
        self.assertGreaterEqual(k, 2, "static ECMP collides on this zone")
        self.assertAlmostEqual(static["time_ns"] / (k * self.wire), 1, delta=0.1)
        spray = self.run_of("contiguous", "none", "spray-q-accept")
        self.assertEqual(spray["retransmitted"], 0)
        self.assertGreater(spray["ooo_packets"], 0)
        self.assertGreaterEqual(spray["time_ns"], self.wire)
        # within a fifth of the uncongested ring: sprayed packets of four senders meet in the
        # downlinks' queues
        self.assertLess(spray["time_ns"], 1.2 * self.ring)
        self.assertLess(spray["time_ns"], static["time_ns"] / 1.5)
        strict = self.run_of("contiguous", "none", "spray-q-nak")
        self.assertGreater(strict["retransmitted"], 0)
        self.assertGreater(strict["naks"], 0)
        self.assertGreater(strict["time_ns"], spray["time_ns"])

    def pinned_sharing(self, placement):
        """The most ring flows slice pinning puts on one uplink: the flow to a host at slot k
        of its rack takes its RTSW's uplink k."""
        order = self.orders[placement]
        load = {}
        for i, s in enumerate(order):
            d = order[(i + 1) % len(order)]
            if rack(s) != rack(d):
                load[(rack(s), slot(d) % CTSWS)] = load.get((rack(s), slot(d) % CTSWS), 0) + 1
        return max(load.values())

    def test_pinning_degrades_under_fragmented_placement(self):
        self.assertEqual(self.pinned_sharing("contiguous"), 1)
        self.assertEqual(self.pinned_sharing("fragmented"), 2)
        whole = self.run_of("contiguous", "none", "pinned")
        frag = self.run_of("fragmented", "none", "pinned")
        self.assertGreaterEqual(whole["time_ns"], self.wire)
        self.assertLess(whole["time_ns"], 1.02 * self.ring)
        self.assertAlmostEqual(frag["time_ns"] / (2 * self.wire), 1, delta=0.1)
        self.assertGreater(frag["time_ns"] / whole["time_ns"], 1.3, "the seeds' 'over 30 %'")
        te = self.run_of("fragmented", "none", "te")
        self.assertLess(te["time_ns"], 1.02 * self.ring)

    def test_te_reinstalled_beats_pinning_after_a_ctsw_failure(self):
        # ctsw1 down at t_f: every rack keeps 3 of 4 uplinks for its cross-rack flows
        order = self.orders["fragmented"]
        cross = [rack(order[i]) != rack(order[(i + 1) % N]) for i in range(N)]
        per_rack = max(sum(1 for i in range(N) if cross[i] and rack(order[i]) == r)
                       for r in range(RACKS))
        bound = FAIL_AT + (self.wire - FAIL_AT) * max(1, per_rack / (CTSWS - 1))
        pinned = self.run_of("fragmented", "ctsw", "pinned")
        te = self.run_of("fragmented", "ctsw", "te")
        for run in (pinned, te):
            self.assertGreaterEqual(run["time_ns"], bound)
            self.assertAlmostEqual(run["bound_ns"], bound, delta=1)
        self.assertLess(te["time_ns"], pinned["time_ns"])

    def test_help_version_and_bad_arguments(self):
        r = subprocess.run([sys.executable, STUDY, "--version"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout.split()[0]), (0, "fabric_study.py"))
        r = subprocess.run([sys.executable, STUDY, "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("docs/study.md", r.stdout)
        for args, why in ((["--routings", "ecmp,te"], "--routings: unknown ecmp"),
                          (["--failures", "spine"], "--failures: unknown spine"),
                          (["--size", "16X"], "'16X': expects bytes"),
                          (["--size", "1000"], "a multiple of 16 ranks x 4096 bytes")):
            r = subprocess.run([sys.executable, STUDY, "--out", os.path.join(self.dir, "bad"),
                                *args], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(why, r.stderr, args)
            self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
