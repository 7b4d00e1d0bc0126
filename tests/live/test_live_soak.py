"""Live: the soak and chaos run (bench/soak.py) at CI size. tests/configs/zone-soak under
roceswd, h0 and h1 sending lossless traffic with `rocesw send` (honouring PFC) and lossy traffic to
r0, with every fault of the soak once, each after a clean round (--ci): a valid reload, an invalid
reload of each kind (YAML, prefix, unknown field, a linked port's speed), a port flap, a PFC
storm on r0's port (broken by the watchdog) and one inside the zone, kill -9 of the dataplane,
roceswd killed and started again; a control-socket and a /metrics client churn throughout.

The run must hold every invariant (bench/soak.py's docstring), and its report must say what the
schedule implies, counted here independently: 21 rounds (10 faults, 11 clean), each of 2 x FRAMES
lossless frames; every lossless frame received, counted as dropped under its fault, or lost with
the killed dataplane, none unexplained; every invariant checked as often as the schedule gives
(lossless accounting every round, no_lossless_drop_outside_fault in every round but those of a
flap, the watchdog's storm and the kill); one restart, within its bound. Every wait in the run
is on counters, the control socket or roceswd's log: the clock only bounds a hung switch."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import ROOT, require_root, tmpdir  # noqa: E402

SOAK = os.path.join(ROOT, "bench", "soak.py")
FRAMES = 200
FAULTS = {"reload_valid": 1, "reload_invalid": 4, "port_flap": 1, "pfc_storm": 2,
          "kill_dataplane": 1, "roceswd_restart": 1}


class LiveSoak(unittest.TestCase):
    def test_soak_ci(self):
        require_root()
        d = tmpdir()
        report = os.path.join(d, "report.json")
        r = subprocess.run(["/usr/bin/python3", SOAK, "--ci", "--seed", "3", "--frames",
                            str(FRAMES), "--warmup", "30", "--report", report, "--workdir",
                            os.path.join(d, "work"), "--metrics-port", "19532"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
        self.assertEqual(r.returncode, 0, r.stdout[-6000:] + r.stderr[-6000:])
        with open(report) as f:
            rep = json.load(f)
        faults = sum(FAULTS.values())
        rounds = 2 * faults + 1
        self.assertEqual(rep["faults"], FAULTS)
        self.assertEqual(rep["fault_variants"], {
            "reload_valid": 1, "reload_invalid yaml": 1, "reload_invalid prefix": 1,
            "reload_invalid field": 1, "reload_invalid speed": 1, "port_flap": 1,
            "pfc_storm watchdog": 1, "pfc_storm zone": 1, "kill_dataplane": 1,
            "roceswd_restart": 1})
        self.assertEqual(rep["rounds"], rounds)
        fr = rep["frames"]
        self.assertEqual(fr["lossless_sent"], rounds * 2 * FRAMES)
        self.assertEqual(fr["lossless_lost_unexplained"], 0)
        self.assertEqual(fr["lossless_sent"], fr["lossless_received"] +
                         fr["lossless_lost_counted"] + fr["lossless_lost_with_killed_dataplane"])
        self.assertGreater(fr["xoff_seen_by_senders"], 0, "r0's slow port paused the senders")
        self.assertGreater(fr["lossy_received"], 0)
        inv = rep["invariants"]
        for name, c in inv.items():
            self.assertEqual(c["failed"], 0, f"{name}: {c['failures']}")
        for name in ("lossless_explained", "lossless_drop_reason_allowed", "no_duplicate",
                     "metrics_match", "receiver_kept_up"):
            self.assertEqual(inv[name]["checked"], rounds, name)
        # every round but the flap's, the watchdog storm's and the kill's allows no loss at all
        self.assertEqual(inv["no_lossless_drop_outside_fault"]["checked"], rounds - 3)
        self.assertEqual(inv["reload_refused"]["checked"], 4)
        self.assertEqual(inv["reload_applied"]["checked"], 1)
        self.assertEqual(inv["reattach"]["checked"], 1)
        self.assertEqual(inv["churn_outside_faults"]["checked"], 2)
        self.assertEqual(len(rep["restarts"]), 1)
        s = rep["restarts"][0]
        self.assertLessEqual(s["config_s"], s["bound_s"])
        self.assertNotEqual(s["old_pid"], s["new_pid"])
        # RSS sampled for roceswd (two processes: one restarted) and the dataplane (two)
        self.assertEqual(len(rep["rss"]["roceswd"]["processes"]), 2)
        self.assertEqual(len(rep["rss"]["dataplane"]["processes"]), 2)
        for kind in ("roceswd", "dataplane"):
            self.assertGreater(rep["rss"][kind]["end_kib"], 0)
        self.assertGreater(rep["churn"]["control"]["ok"], 0)
        self.assertGreater(rep["churn"]["metrics"]["ok"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
