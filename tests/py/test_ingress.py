"""Ingress match-action through `rocesw inspect --config`: LPM, ECMP under the 5-tuple and the
destination-QP (UDF) policies checked against CRCs computed here from the catalogue definitions,
policy routes, QoS maps (SONiC AZURE, REFERENCE §4), TTL expiry and drop reasons."""
import os
import struct
import unittest

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rocepkt
from common import ROOT, inspect, tmpdir, write_pcap

CONFIG = os.path.join(ROOT, "tests", "configs", "ecmp4.yaml")
UPLINKS = ["Ethernet16", "Ethernet24", "Ethernet32", "Ethernet40"]
AZURE_TC = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}
AZURE_PG = {3: 3, 4: 4, 7: 7}


def crc16_arc(data, crc=0):
    """CRC-16/ARC bit by bit: poly 0x8005 reflected (0xA001), init 0, no xorout."""
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def crc16_xmodem(data, crc=0):
    """CRC-16/XMODEM bit by bit: poly 0x1021, init 0, not reflected."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def ip4(s):
    return bytes(int(x) for x in s.split("."))


class IngressTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        assert crc16_arc(b"123456789") == 0xBB3D and crc16_xmodem(b"123456789") == 0x31C3
        cls.dir = tmpdir()

    def run_frames(self, frames, in_port="Ethernet0"):
        path = write_pcap(os.path.join(self.dir, "in.pcap"), frames)
        return inspect(path, "--config", CONFIG, "--in-port", in_port)

    def test_five_tuple_ignores_qp(self):
        frames = [rocepkt.roce(dst="10.2.0.9", dqp=qp, sport=49152) for qp in range(1, 65)]
        recs = self.run_frames(frames)
        key = ip4("10.1.0.1") + ip4("10.2.0.9") + bytes([17]) + struct.pack("!HH", 49152, 4791)
        want = crc16_arc(key)
        for r in recs:
            self.assertEqual(r["drop"], None)
            self.assertEqual(r["hash"], want)
            self.assertEqual(r["ecmp_member"], want % 4)
            self.assertEqual(r["egress_port"], UPLINKS[want % 4])
        self.assertEqual(len({r["egress_port"] for r in recs}), 1)

    def test_dest_qp_udf_spreads(self):
        qps = list(range(0x100, 0x100 + 64))
        frames = [rocepkt.roce(dst="10.3.1.1", dqp=qp, sport=49152) for qp in qps]
        recs = self.run_frames(frames)
        for qp, r in zip(qps, recs):
            want = crc16_xmodem(qp.to_bytes(3, "big"))
            self.assertEqual(r["hash"], want)
            self.assertEqual(r["egress_port"], UPLINKS[want % 4])
        self.assertEqual({r["egress_port"] for r in recs}, set(UPLINKS))
        # the UDF matches UDP/4791 only: other UDP traffic hashes on zeros
        other = self.run_frames([Ether(dst="02:00:00:00:01:00") / IP(src="10.1.0.1", dst="10.3.0.1") /
                                 UDP(sport=1, dport=4792) / Raw(b"\x01" * 40)])[0]
        self.assertEqual(other["hash"], crc16_xmodem(b"\0\0\0"))

    def test_resilient_group_uses_buckets(self):
        recs = self.run_frames([rocepkt.roce(dst="10.4.0.1", dqp=qp) for qp in range(200, 264)])
        for r in recs:
            self.assertEqual(r["bucket"], r["hash"] % 64)
            self.assertIn(r["egress_port"], UPLINKS)
            self.assertEqual(r["egress_port"], UPLINKS[r["ecmp_member"]])

    def test_policy_route_pins_by_ingress_port(self):
        frames = [rocepkt.roce(dst="10.3.1.1", dqp=qp) for qp in range(1, 33)]
        pinned = self.run_frames(frames, in_port="Ethernet8")
        self.assertEqual({r["egress_port"] for r in pinned}, {"Ethernet32"})
        self.assertTrue(all(r["hash"] is None for r in pinned))
        hashed = self.run_frames(frames, in_port="Ethernet0")
        self.assertGreater(len({r["egress_port"] for r in hashed}), 1)

    def test_qos_maps_azure(self):
        dscps = list(range(64))
        recs = self.run_frames([rocepkt.roce(dst="10.1.0.1", dscp=d) for d in dscps])
        for d, r in zip(dscps, recs):
            tc = AZURE_TC.get(d, 1)
            self.assertEqual((r["tc"], r["pg"]), (tc, AZURE_PG.get(tc, 0)))

    def test_ttl_and_drops(self):
        frames = [
            rocepkt.roce(dst="10.1.0.1", ttl=1),
            rocepkt.roce(dst="10.1.0.1", ttl=2),
            rocepkt.roce(dst="192.0.2.7"),
            rocepkt.roce(dst="172.16.0.1"),
            rocepkt.roce(dst="10.1.0.1", dmac="02:00:00:00:99:99"),
            rocepkt.roce(dst="10.1.0.1", smac="03:00:00:00:00:01"),
            Ether(dst="01:80:c2:00:00:01", type=0x8808) / MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=5),
            rocepkt.roce(ipv6=True, src="fd00:1::1", dst="fd00:2::5"),
            rocepkt.roce(ipv6=True, src="fd00:1::1", dst="fd00:3::5"),
            Ether(dst="02:00:00:00:01:00") / IP(src="10.1.0.1", dst="10.2.3.4") / TCP(sport=1000, dport=22),
            rocepkt.roce(dst="224.0.0.5"),
        ]
        want = ["ttl_expired", None, "blackhole_route", "lpm4_miss", "dmac_not_router",
                "smac_multicast", "pfc_consumed", None, "lpm6_miss", None, "ip_multicast"]
        recs = self.run_frames(frames)
        self.assertEqual([r["drop"] for r in recs], want)
        self.assertEqual(recs[1]["egress_port"], "Ethernet0")
        self.assertEqual(recs[7]["egress_port"], "Ethernet16")
        key = ip4("10.1.0.1") + ip4("10.2.3.4") + bytes([6]) + struct.pack("!HH", 1000, 22)
        self.assertEqual(recs[9]["hash"], crc16_arc(key))

    def test_ctsw_example_default_route(self):
        ctsw = os.path.join(ROOT, "config", "ctsw.yaml")
        frames = [rocepkt.roce(dst="10.1.3.7", dmac="02:00:00:00:02:00"),
                  rocepkt.roce(dst="8.8.8.8", dmac="02:00:00:00:02:00"),
                  rocepkt.roce(dst="10.1.9.1", dmac="02:00:00:00:02:00")]
        path = write_pcap(os.path.join(self.dir, "ctsw.pcap"), frames)
        recs = inspect(path, "--config", ctsw, "--in-port", "Ethernet0")
        self.assertEqual(recs[0]["egress_port"], "Ethernet16")
        self.assertIn(recs[1]["egress_port"], ("Ethernet512", "Ethernet520"))
        self.assertIn(recs[2]["egress_port"], ("Ethernet512", "Ethernet520"))  # /0 catches it


if __name__ == "__main__":
    unittest.main(verbosity=1)
