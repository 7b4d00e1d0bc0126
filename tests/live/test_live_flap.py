"""Live: a host link flapping under traffic. A host floods RoCEv2 over 32 QPs (destination-QP
ECMP over 4 uplinks, resilient buckets) until the test stops it, while the switch's side of
uplink u1's veth goes down and up 20 times (the interface rocesw-dataplane's af_packet port
sits on). Afterwards, by the switch's counters on its control socket and the captures:

- every frame the host sent was received, and received = transmitted + dropped + consumed with
  nothing left queued (conservation holds through the flaps);
- the other three uplinks lost nothing: each capture holds exactly what the switch counted as
  sent on that link;
- forwarding resumes on every link: 32 frames (one per QP) sent after the last flap all arrive,
  each on the uplink its QP used before the flapping (the flaps changed no table);
- the dataplane exits 0 with its final counters holding.
The flaps are driven by the clock (50 ms down, 50 ms up); nothing asserted depends on it."""
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Control, Flood, Lab, finish,  # noqa: E402
                    four_uplink_config, pcap_count, send, sh, wait_captured, wait_drained,
                    wait_for_line)

N_QP = 32
HASH = """HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf: [{base: L4, offset: 13, length: 3, match: {ip_protocol: 17, l4_dst_port: 4791}}]"""
FLAPS = 20


def frames(psn):
    return [rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152, dqp=0x1000 + qp, psn=psn,
                         smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(64)) for qp in range(N_QP)]


def uplink_tx(c, i):
    return next(p["tx_packets"] for p in c["ports"] if p["name"] == f"Ethernet{8 * (i + 1)}")


class LiveFlap(unittest.TestCase):
    def test_host_link_flaps_under_traffic(self):
        require_root()
        d = tmpdir()
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(four_uplink_config("rswf", "live-flap", HASH,
                                       "hash_policy: dest_qp, buckets: 256, resilient: true"))
        lab = Lab("rswf")
        try:
            h0 = lab.host("h0", "rswf-h0", HOST_MAC)
            ups = [lab.host(f"u{i}", f"rswf-u{i}", UPLINK_MACS[i]) for i in range(4)]
            stats, sock = os.path.join(d, "stats.json"), os.path.join(d, "dp.sock")
            dp = lab.start(dataplane_cmd("rswflap", "--config", cfg, "--stats-json", stats,
                                         "--control-socket", sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding")
            ctl = Control(sock)
            caps = [os.path.join(d, f"u{i}.pcap") for i in range(4)]
            tcpdumps = [lab.capture(ns, p) for ns, p in zip(ups, caps)]
            tx = lab.socket(h0)
            sent = 0

            def settle():
                c = wait_drained(ctl, sent)
                for i in range(4):
                    wait_captured(caps[i], uplink_tx(c, i))
                return c

            def placement(psn):
                out = {}
                for i, cap in enumerate(caps):
                    if not pcap_count(cap):
                        continue
                    for p in rdpcap(cap):
                        raw = bytes(p)
                        if int.from_bytes(raw[51:54], "big") == psn:
                            out[int.from_bytes(raw[47:50], "big")] = i
                return out

            sent += send(tx, frames(1))
            settle()
            before = placement(1)
            self.assertEqual(len(before), N_QP)
            self.assertIn(1, before.values(), "some flows use u1")
            flood = Flood(lab, tx, [f for psn in range(2, 60) for f in frames(psn)], 0.0002)
            for _ in range(FLAPS):
                sh("ip", "link", "set", "rswf-u1", "down")
                time.sleep(0.05)
                sh("ip", "link", "set", "rswf-u1", "up")
                time.sleep(0.05)
            sent += flood.stop()
            c = settle()
            k = c["conservation"]
            self.assertEqual(k["received"], sent, "every frame the host sent was received")
            self.assertEqual(k["queued"], 0)
            self.assertEqual(k["received"], k["transmitted"] + k["dropped"] + k["consumed"])
            for i in (0, 2, 3):
                self.assertEqual(pcap_count(caps[i]), uplink_tx(c, i),
                                 f"u{i} lost nothing while u1 flapped")
            self.assertLessEqual(pcap_count(caps[1]), uplink_tx(c, 1))
            # forwarding resumes, on the same uplinks as before
            sent += send(tx, frames(900))
            settle()
            self.assertEqual(placement(900), before, "every flow back on its uplink")
            final, _ = finish(self, dp, tcpdumps, stats)
            self.assertTrue(final["conservation"]["holds"], final["conservation"])
            if os.environ.get("ROCESW_TEST_VERBOSE"):
                print(f"{sent} frames, u1 link: switch sent {uplink_tx(c, 1)}, captured "
                      f"{pcap_count(caps[1])}; drops {final['drops']}")
        finally:
            lab.close()


if __name__ == "__main__":
    unittest.main(verbosity=1)
