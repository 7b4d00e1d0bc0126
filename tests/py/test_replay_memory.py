"""Replay's packet memory grows with what the buffers hold (issue 17): DPDK starts with what the
route tables and the first packet pools need (256 MiB and the tables, control/replay_memory.c),
and pools beyond it are made in memory added as the buffers fill (dataplane/replay/replay_mem.c).

A switch with 1 GiB lossy pools (default lossy profiles, dynamic_th 3: alpha 8) under a
2 x 400G -> 100G incast of 4 KiB frames (160 MiB from each sender, DSCP 0, lossy): the queue
grows by 800 - 100 Gb/s for as long as both send, to 7/8 of 320 MiB = 280 MiB (294 MB) at the
end, below alpha/(1 + alpha) of the pool (954 MB), so nothing may be dropped; its frames take more
packet memory than DPDK was started with, so before the growth they were no_mbuf drops.
"""
import json
import os
import subprocess
import unittest

from common import ROCESW, tmpdir

SWITCH = """
DEVICE_METADATA:
  localhost: {hostname: deep, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 400000, role: downlink}
  Ethernet8: {speed: 400000, role: downlink}
  Ethernet16: {speed: 100000, role: downlink}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
BUFFER_POOL:
  ingress_lossless_pool: {size: 1073741824, type: ingress, mode: dynamic}
  egress_lossy_pool: {size: 1073741824, type: egress, mode: dynamic}
  egress_lossless_pool: {size: 1073741824, type: egress, mode: static}
"""
MESSAGE = 160 << 20


class Memory(unittest.TestCase):
    def test_queue_past_dpdk_start_memory_without_drop(self):
        d = tmpdir()
        gen = os.path.join(d, "gen")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--dscp", "0", "--mtu", "4096", "--message", str(MESSAGE), "--out", gen],
                       check=True, capture_output=True)
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(SWITCH)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out, "--captures", "none",
                            "--sample-ns", "0", "--in", f"Ethernet0={gen}/h0.pcap",
                            "--in", f"Ethernet8={gen}/h1.pcap"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["drops"], {}, "nothing dropped, no no_mbuf")
        self.assertTrue(s["conservation"]["holds"])
        q = [p for p in s["ports"] if p["name"] == "Ethernet16"][0]["queues"]
        depth = max(x["max_depth_bytes"] for x in q)
        # 7/8 of the 2 x 160 MiB of frames (payload plus headers) are queued when both finish
        self.assertGreater(depth, 7 / 8 * 2 * MESSAGE * 0.95)
        self.assertGreater(depth, 256 << 20, "more than DPDK's start memory")
        sent = sum(p["tx_packets"] for p in s["ports"] if p["name"] == "Ethernet16")
        got = sum(p["rx_packets"] for p in s["ports"])
        self.assertEqual(sent, got)


if __name__ == "__main__":
    unittest.main()
