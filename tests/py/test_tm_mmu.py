"""The traffic manager's buffer model in replay (docs/tm.md, "Buffer"): pools chosen by role
whatever the order of BUFFER_POOL, default pools filled in; lossless classes that pause instead of
dropping however small the frames; a deep CTSW buffer that queues far past 8,192 packets and sends
XOFF where the dynamic-threshold formula of REFERENCE.md §3 puts it."""
import glob
import json
import os
import re
import shutil
import subprocess
import unittest

from scapy.utils import RawPcapReader

from common import ROCESW, ROOT, tmpdir

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


def read(path):
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, d) for d, m in r]
    finally:
        r.close()


def pfc_frames(path):
    """PFC frames in a capture, read by scapy: (class-enable vector, time of priority 3)."""
    from scapy.contrib.mac_control import MACControlClassBasedFlowControl
    from scapy.layers.l2 import Ether
    got = []
    for _, d in read(path):
        if d[12:14] != b"\x88\x08":
            continue
        p = Ether(d)
        c = p[MACControlClassBasedFlowControl]
        got.append((c._reserved << 8 | c.c7_enabled << 7 | c.c6_enabled << 6 | c.c5_enabled << 5 |
                    c.c4_enabled << 4 | c.c3_enabled << 3 | c.c2_enabled << 2 |
                    c.c1_enabled << 1 | c.c0_enabled, c.c3_pause_time))
    return got


# A CTSW with a Jericho-class deep buffer: 1 GiB pools; its lossless PGs' threshold alpha =
# 2^-7 of the free pool (REFERENCE.md §3's dynamic threshold), reserve 18200 B (2 x MTU), headroom 1 MB.
DEEP = """
DEVICE_METADATA:
  localhost: {hostname: deep, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 400000, role: downlink}
  Ethernet8: {speed: 400000, role: downlink}
  Ethernet16: {speed: 100000, role: downlink}
PORT_QOS_MAP:
  Ethernet0: {pfc_enable: "3"}
  Ethernet8: {pfc_enable: "3"}
  Ethernet16: {pfc_enable: "3"}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
BUFFER_POOL:
  ingress_lossless_pool: {size: 1073741824, type: ingress, mode: dynamic}
  egress_lossless_pool: {size: 1073741824, type: egress, mode: static}
BUFFER_PROFILE:
  pg_deep: {pool: ingress_lossless_pool, size: 1018200, xoff: 1000000, xon: 18200,
            xon_offset: 18200, dynamic_th: -7}
BUFFER_PG:
  "Ethernet0|3": {profile: pg_deep}
  "Ethernet8|3": {profile: pg_deep}
"""


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

    def test_ring_of_small_frames_pauses_instead_of_dropping(self):
        """issue 19's ring of 314-byte frames through the two-stage zone, with RTSW ingress pools of
        8 MiB: a PG's XOFF point, alpha x (pool - use) with alpha 1, is 4 MiB, which 8,192 such
        frames (2.5 MB) do not reach. The PGs of the hosts' ports must pause the hosts (PFC in
        the RTSWs' captures, read by tshark) and nothing may be dropped."""
        zdir = os.path.join(self.dir, "zone")
        shutil.copytree(os.path.join(ROOT, "config", "zone-2stage"), os.path.join(zdir, "zone-2stage"))
        shutil.copy(os.path.join(ROOT, "config", "zone-2stage.yaml"), zdir)
        for f in glob.glob(os.path.join(zdir, "zone-2stage", "rtsw*.yaml")):
            with open(f) as fh:
                text = fh.read()
            # the shipped RTSW's 64 MiB ingress pool, cut to 8 MiB
            pool = re.compile(r"^  ingress_lossless_pool: \{size: \d+,", re.M)
            self.assertEqual(len(pool.findall(text)), 1, f)
            with open(f, "w") as fh:
                fh.write(pool.sub("  ingress_lossless_pool: {size: 8388608,", text))
        gen = os.path.join(self.dir, "ring")
        subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "8", "--qps", "4",
                        "--qp-mode", "split", "--mtu", "256", "--message", "8388608",
                        "--out", gen], check=True, capture_output=True)
        out = os.path.join(self.dir, "ring-out")
        r = subprocess.run([ROCESW, "replay", "--config", os.path.join(zdir, "zone-2stage.yaml"),
                            "--in-dir", gen, "--out", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["drops"], {}, "lossless: nothing dropped")
        c = s["conservation"]
        self.assertTrue(c["holds"] and c["lossless_holds"], c)
        self.assertEqual((c["dropped"], c["queued"], c["in_flight"]), (0, 0, 0))
        xoff = 0
        for f in glob.glob(os.path.join(out, "rtsw*", "Ethernet*.pcap")):
            frames = pfc_frames(f)
            xoff += sum(1 for enbv, t3 in frames if enbv & 0x08 and t3 > 0)
        self.assertGreater(xoff, 0, "the RTSWs paused their hosts")
        # the deepest queue went past what a fixed ring of 8,192 such frames holds
        depth = max(q["max_depth_bytes"] for sw in s["switches"] for p in sw["ports"]
                    for q in p["queues"])
        self.assertGreater(depth, 8192 * 314)

    def test_deep_ctsw_queues_past_8192_and_pauses_at_the_formula(self):
        """issue 17: a CTSW with a 1 GiB ingress pool under a 2 x 400G -> 100G incast of 314-byte
        frames. Both PGs grow alike, so the first XOFF comes when a PG's shared use s reaches
        alpha x (S - 2s), s* = alpha S / (1 + 2 alpha) = S / 130 (8.26 MB, ~26k frames). The
        senders (direct inputs) do not honour PFC: past the headroom the only drop allowed is
        headroom_overflow."""
        gen = os.path.join(self.dir, "deep-gen")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--mtu", "256", "--message", "12582912", "--out", gen],
                       check=True, capture_output=True)
        s = self.replay_switch("deep", DEEP, gen)
        self.assertEqual(set(s["drops"]) - {"headroom_overflow"}, set(), s["drops"])
        self.assertTrue(s["conservation"]["lossless_holds"])
        self.assertTrue(s["conservation"]["holds"])
        out = os.path.join(self.dir, "deep", "out")
        q3 = [p for p in s["ports"] if p["name"] == "Ethernet16"][0]["queues"][3]
        frame = len(read(os.path.join(gen, "h0.pcap"))[0][1])
        self.assertGreater(q3["max_depth_bytes"] // frame, 8192, "queued past a ring of 8192")
        # the first XOFF out of Ethernet0 and what PG 3 of Ethernet0 held then
        pfc = [(t, d) for t, d in read(os.path.join(out, "Ethernet0.pcap")) if d[12:14] == b"\x88\x08"]
        self.assertTrue(pfc, "XOFF sent")
        t_xoff = pfc[0][0]
        self.assertEqual(int.from_bytes(pfc[0][1][24:26], "big"), 65535)
        ins = {h: read(os.path.join(gen, f"{h}.pcap")) for h in ("h0", "h1")}
        outs = read(os.path.join(out, "Ethernet16.pcap"))

        def held(h, src):
            arrived = sum(len(d) for t, d in ins[h] if t <= t_xoff)
            left = sum(len(d) for t, d in outs if t <= t_xoff and d[26:30] == src)
            return arrived - left - 18200  # shared use: beyond the reserve

        s0, s1 = held("h0", bytes([10, 1, 0, 1])), held("h1", bytes([10, 1, 0, 3]))
        size = 1 << 30
        # XOFF: s0 >= (S - s0 - s1) / 128, and one frame less was still below it
        self.assertGreaterEqual(s0 * 128, size - s0 - s1)
        self.assertLess((s0 - frame) * 128, size - (s0 - frame) - s1)
        self.assertLess(abs(s0 - size / 130), 4 * frame)

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
