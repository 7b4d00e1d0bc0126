"""The hash lab explains an ARS decision (`rocesw hash explain --config`, docs/hash-lab.md "ARS"
and docs/ars.md "Explain"): the flowlet entry (hash mod max_flows), whether the packet starts a
new flowlet (idle time elapsed against the inactivity interval), each candidate member's load
and queue averages, their bands and the combined band (a member that is down is no candidate),
and the member chosen and why. Every expected number below is computed by hand from docs/ars.md's
formulas and the lab's port model (each port drains at its speed); none is captured from a run.

The switch: ports Ethernet8 and Ethernet16 at 800 Mb/s (100 bytes per us), Ethernet24 down;
group `up` over the three with a flowlet-quality ARS object (idle time 50 us); load and queue
bands between 0 and 2000 bytes (band = avg * 8 / 2000), EWMA exponent 1 (avg = (avg + x) / 2),
weights 50/50; samples every 10 us. 10.8/16 and 10.7/16 go straight to Ethernet8 and Ethernet16:
the traffic that loads them. Frames (times in us after the first):
  1  t=0    1000 B to 10.8.0.1 (Ethernet8)      the baseline sample (averages 0)
  2  t=5    1000 B to 10.8.0.1 (Ethernet8)
  3  t=12   1000 B flow F to 10.9.0.1 (ARS)     sample of interval 10
  4  t=30   1000 B flow F                        sample, 2 intervals
  5  t=92   3000 B to 10.7.0.1 (Ethernet16)     sample, 6 intervals
  6  t=100  1000 B flow F                        sample, 1 interval"""
import json
import os
import subprocess
import unittest

import rocepkt
from common import ROCESW, inspect, tmpdir, write_pcap

CONFIG = """DEVICE_METADATA:
  localhost: {hostname: t, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000}
  Ethernet8: {speed: 800}
  Ethernet16: {speed: 800}
  Ethernet24: {speed: 800, admin_status: down}
NEIGH:
  "Ethernet8|10.255.0.1": {neigh: "02:00:00:00:10:01"}
  "Ethernet16|10.255.0.3": {neigh: "02:00:00:00:10:03"}
  "Ethernet24|10.255.0.5": {neigh: "02:00:00:00:10:05"}
ARS_PROFILE:
  p: {sampling_interval: 10, past_load_min_value: 0, past_load_max_value: 2000,
      past_load_weight: 1, future_load_min_value: 0, future_load_max_value: 2000,
      future_load_weight: 1, port_load_weight: 50, port_queue_weight: 50, random_seed: 7}
ARS_OBJECT:
  a: {assign_mode: per_flowlet_quality, flowlet_idle_time: 50, max_flows: 512,
      match_l4_dst_port: 4791}
NEXTHOP_GROUP:
  up: {nexthop: "10.255.0.1,10.255.0.3,10.255.0.5", ars_object: a}
STATIC_ROUTE:
  "10.9.0.0/16": {nexthop_group: up}
  "10.8.0.0/16": {nexthop: "10.255.0.1"}
  "10.7.0.0/16": {nexthop: "10.255.0.3"}
"""


def frame(dst, size, t_us):
    f = rocepkt.roce(dst=dst, payload=b"")
    f = rocepkt.roce(dst=dst, payload=bytes(size - len(bytes(f))))
    assert len(bytes(f)) == size
    f.time = 1 + t_us * 1e-6
    return f


class ArsExplain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        d = tmpdir()
        cls.cfg = os.path.join(d, "switch.yaml")
        with open(cls.cfg, "w") as f:
            f.write(CONFIG)
        cls.pcap = write_pcap(os.path.join(d, "f.pcap"), [
            frame("10.8.0.1", 1000, 0), frame("10.8.0.1", 1000, 5), frame("10.9.0.1", 1000, 12),
            frame("10.9.0.1", 1000, 30), frame("10.7.0.1", 3000, 92),
            frame("10.9.0.1", 1000, 100)])

    def explain(self, n, *extra):
        r = subprocess.run([ROCESW, "hash", "explain", "--config", self.cfg, "--pcap", self.pcap,
                            "--frame", str(n), "--json", *extra], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def quality(self, ars):
        return {c["port"]: (c["load_avg"], c["load_band"], c["queue_avg"], c["queue_band"],
                            c["band"]) for c in ars["candidates"]}

    def test_new_flow_takes_the_best_band(self):
        e = self.explain(3)
        a = e["ars"]
        self.assertEqual(a["mode"], "per_flowlet_quality")
        self.assertEqual(a["flowlet_entry"], e["hash"] % 512, "the entry is hash mod max_flows")
        self.assertEqual(a["entry"]["state"], "empty")
        self.assertTrue(a["new_flowlet"])
        # at t=12 the sample of interval 10: Ethernet8 got 2000 B by t=5 and drained 100 B/us
        # from t=0: 1200 B sent and 800 B queued at t=12. Averages (0 + x) / 2: load 600
        # (band 600 * 8 / 2000 = 2), queue 400 (band 1), combined (50*2 + 50*1) / 100 = 1.
        # Ethernet16 idle: 0. Ethernet24 is down: no candidate.
        self.assertEqual(self.quality(a), {"Ethernet8": (600, 2, 400, 1, 1),
                                           "Ethernet16": (0, 0, 0, 0, 0)})
        self.assertEqual((a["best_band"], a["tied"], a["reason"]), (0, 1, "best_band"))
        self.assertEqual(e["egress_port"], "Ethernet16")
        self.assertEqual(a["member"], e["member"])

    def test_within_idle_time_stays(self):
        e = self.explain(4)
        a = e["ars"]
        self.assertEqual(a["entry"]["state"], "this_flow")
        self.assertEqual(a["entry"]["idle_ns"], 18000, "30 us - 12 us since F's last packet")
        self.assertEqual(a["idle_time_ns"], 50000)
        self.assertFalse(a["new_flowlet"])
        self.assertEqual(a["reason"], "kept")
        self.assertEqual(e["egress_port"], "Ethernet16")

    def test_after_idle_time_moves_to_the_best(self):
        e = self.explain(6)
        a = e["ars"]
        self.assertEqual(a["entry"]["idle_ns"], 70000, "100 us - 30 us: past the idle time")
        self.assertTrue(a["new_flowlet"])
        # Ethernet16 sent F's two frames (2000 B) by t=92: the sample at 30 (2 intervals, 1000
        # B sent, 500 each): 0 -> 250 -> 375; at 92 (6 intervals, 1000 B, 166 each): 375 ->
        # 270 -> 218 -> 192 -> 179 -> 172 -> 169; at 100 the 3000 B frame of t=92 has 800 B
        # sent, 2200 B queued: load (169 + 800) / 2 = 484 (band 1), queue (0 + 2200) / 2 =
        # 1100 (band 4), combined (50 + 200) / 100 = 2.
        # Ethernet8, idle since its queue emptied by t=20: sent 800 B by 30 (400 each): 600 ->
        # 500 -> 450; then nothing: 450 halves 7 times to 3; queue 400 -> 200 -> 100, then
        # halves 7 times to 0: band 0.
        self.assertEqual(self.quality(a), {"Ethernet8": (3, 0, 0, 0, 0),
                                           "Ethernet16": (484, 1, 1100, 4, 2)})
        self.assertEqual(a["reason"], "best_band")
        self.assertEqual(e["egress_port"], "Ethernet8")
        self.assertNotEqual(a["member"], a["entry"]["member"], "the flow moved")

    def test_text(self):
        r = subprocess.run([ROCESW, "hash", "explain", "--config", self.cfg, "--pcap", self.pcap,
                            "--frame", "6"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("last seen 70.000 us ago (idle time 50.000 us): a new flowlet", r.stdout)
        self.assertRegex(r.stdout, r"Ethernet16 +load +484 band 1  queue +1100 band 4  -> band 2")
        self.assertIn("next hop 10.255.0.1 out of Ethernet8", r.stdout)
        # rocesw inspect --trace carries the same decision as one line
        recs = inspect(self.pcap, "--config", self.cfg, "--trace")
        ars = [line for line in recs[5]["trace"] if line.startswith("ars:")]
        self.assertEqual(len(ars), 1, recs[5]["trace"])
        self.assertIn("a new flowlet", ars[0])

    def test_tie_is_the_seeded_draw(self):
        """With every candidate in band 0 the choice is the group's seeded draw, and says so."""
        d = tmpdir()
        pcap = write_pcap(os.path.join(d, "t.pcap"), [frame("10.9.0.1", 1000, 0)])
        r = subprocess.run([ROCESW, "hash", "explain", "--config", self.cfg, "--pcap", pcap,
                            "--json"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        a = json.loads(r.stdout)["ars"]
        self.assertEqual((a["best_band"], a["tied"], a["reason"]), (0, 2, "tie_seeded"))

    def test_bad_usage(self):
        r = subprocess.run([ROCESW, "hash", "explain", "--config", self.cfg], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--config takes --pcap", r.stderr)
        r = subprocess.run([ROCESW, "hash", "explain", "--config", self.cfg, "--pcap", self.pcap,
                            "--frame", "99"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no such frame", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
