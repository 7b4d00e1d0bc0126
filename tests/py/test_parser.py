"""Parser on scapy-built packets: every opcode family, VLAN, IPv6, CNP, PFC, PAUSE, IPv4 options,
bad checksums, fragments. Expectations come from REFERENCE.md via rocepkt, not from the C code."""
import os
import unittest

from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.layers.inet import IP, UDP, TCP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop
from scapy.layers.l2 import Ether, ARP
from scapy.packet import Raw

import rocepkt
from common import inspect, tmpdir, write_pcap


class ParserTest(unittest.TestCase):
    def setUp(self):
        self.dir = tmpdir()

    def run_frames(self, frames, *args):
        path = write_pcap(os.path.join(self.dir, "in.pcap"), frames)
        recs = inspect(path, "--icrc", *args)
        self.assertEqual(len(recs), len(frames))
        return recs

    def test_every_defined_opcode(self):
        ops = sorted(rocepkt.OPCODES)
        frames = [rocepkt.roce(opcode=op, dqp=0x100 + op, psn=op * 7, payload=b"\xab" * 16)
                  for op in ops]
        for op, r in zip(ops, self.run_frames(frames)):
            with self.subTest(opcode=hex(op)):
                self.assertEqual(r["parse"], "ok")
                self.assertEqual(r["bth_opcode"], op)
                self.assertEqual(r["bth_dest_qp"], 0x100 + op)
                self.assertEqual(r["bth_psn"], op * 7)
                self.assertEqual(r["icrc"], "ok")
                self.assertEqual(r["udp_dport"], 4791)

    def test_reserved_opcodes_rejected(self):
        frames = [rocepkt.roce(opcode=op) for op in rocepkt.RESERVED_OPCODES]
        for op, r in zip(rocepkt.RESERVED_OPCODES, self.run_frames(frames)):
            with self.subTest(opcode=hex(op)):
                self.assertEqual(r["parse"], "bth_bad_opcode")

    def test_bad_icrc_is_reported_not_dropped(self):
        r = self.run_frames([rocepkt.roce(good_icrc=False)])[0]
        self.assertEqual(r["parse"], "ok")
        self.assertEqual(r["icrc"], "bad")

    def test_vlan_tags_keep_pcp(self):
        frames = [rocepkt.roce(vlans=[(3, 100)]), rocepkt.roce(vlans=[(5, 10), (3, 20)])]
        r1, r2 = self.run_frames(frames)
        self.assertEqual((r1["parse"], r1["vlan_pcp"], r1["icrc"]), ("ok", 3, "ok"))
        self.assertEqual((r2["parse"], r2["vlan_pcp"], r2["icrc"]), ("ok", 5, "ok"))
        three = Ether() / rocepkt.Dot1Q() / rocepkt.Dot1Q() / rocepkt.Dot1Q() / IP() / UDP()
        self.assertEqual(self.run_frames([three])[0]["parse"], "vlan_too_many_tags")

    def test_ipv6_roce_and_extension_headers(self):
        p = rocepkt.roce(ipv6=True, src="fd00:1::1", dst="fd00:2::1", dscp=26, ecn=1, ttl=9,
                         flow_label=0xABCDE, dqp=0x654321)
        r = self.run_frames([p])[0]
        self.assertEqual((r["parse"], r["src_ip"], r["dst_ip"]), ("ok", "fd00:1::1", "fd00:2::1"))
        self.assertEqual((r["dscp"], r["ecn"], r["ttl"], r["bth_dest_qp"]), (26, 1, 9, 0x654321))
        self.assertEqual(r["icrc"], "ok")
        ext = (Ether() / IPv6(src="fd00::1", dst="fd00::2") / IPv6ExtHdrHopByHop() /
               IPv6ExtHdrDestOpt() / UDP(sport=1, dport=2) / Raw(b"x" * 8))
        r = self.run_frames([ext])[0]
        self.assertEqual((r["parse"], r["udp_sport"], r["udp_dport"]), ("ok", 1, 2))
        deep = IPv6(src="fd00::1", dst="fd00::2")
        for _ in range(9):
            deep = deep / IPv6ExtHdrDestOpt()
        r = self.run_frames([Ether() / deep / UDP() / Raw(b"x")])[0]
        self.assertEqual(r["parse"], "ipv6_ext_limit")

    def test_cnp(self):
        from scapy.contrib.roce import cnp
        p = Ether() / IP(src="10.0.0.1", dst="10.0.0.2", tos=(48 << 2)) / UDP(sport=1, dport=4791) / cnp(0xABCDE)
        r = self.run_frames([p])[0]
        self.assertEqual((r["parse"], r["bth_opcode"], r["bth_dest_qp"], r["bth_becn"]),
                         ("ok", 0x81, 0xABCDE, 1))
        self.assertEqual(r["icrc"], "ok")  # scapy computed this ICRC, not rocepkt

    def test_pfc_and_pause(self):
        pfc = (Ether(dst="01:80:c2:00:00:01", type=0x8808) /
               MACControlClassBasedFlowControl(c3_enabled=1, c4_enabled=1, c3_pause_time=0xFFFF,
                                               c4_pause_time=0x1234))
        pause = Ether(dst="01:80:c2:00:00:01", type=0x8808) / MACControlPause(pause_time=777)
        r1, r2 = self.run_frames([pfc, pause])
        self.assertEqual(r1["parse"], "ok")
        self.assertEqual(r1["pfc_class_enable"], 0x18)
        self.assertEqual(r1["pfc_time"], [0, 0, 0, 0xFFFF, 0x1234, 0, 0, 0])
        self.assertEqual((r2["parse"], r2["pfc_class_enable"], r2["pfc_time"]), ("ok", None, [777]))
        bad = Ether(dst="01:80:c2:00:00:01", type=0x8808) / Raw(b"\x00\x02" + b"\0" * 44)
        self.assertEqual(self.run_frames([bad])[0]["parse"], "mac_control_bad_opcode")

    def test_ipv4_options_checksum_fragments(self):
        opt = Ether() / IP(src="1.1.1.1", dst="2.2.2.2", options=b"\x01\x01\x01\x00") / UDP(sport=5, dport=6) / Raw(b"x" * 10)
        r = self.run_frames([opt])[0]
        self.assertEqual((r["parse"], r["udp_sport"], r["udp_dport"]), ("ok", 5, 6))
        raw = bytearray(bytes(Ether() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP() / Raw(b"x" * 10)))
        raw[14 + 10] ^= 0xFF
        self.assertEqual(self.run_frames([Ether(bytes(raw))])[0]["parse"], "ipv4_bad_checksum")
        later = Ether() / IP(src="1.1.1.1", dst="2.2.2.2", frag=100, proto=17) / Raw(b"y" * 40)
        r = self.run_frames([later])[0]
        self.assertEqual((r["parse"], r["udp_sport"]), ("ok", None))
        first = Ether() / IP(src="1.1.1.1", dst="2.2.2.2", flags="MF") / UDP(sport=7, dport=4791) / Raw(b"z" * 40)
        r = self.run_frames([first])[0]
        self.assertEqual((r["parse"], r["udp_dport"], r["bth_opcode"]), ("ok", 4791, None))

    def test_non_roce_ip_and_other_ethertypes(self):
        tcp = Ether() / IP(src="1.1.1.1", dst="2.2.2.2") / TCP(sport=80, dport=1234)
        udp = Ether() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=53, dport=53) / Raw(b"q" * 20)
        arp = Ether() / ARP()
        r1, r2, r3 = self.run_frames([tcp, udp, arp])
        self.assertEqual((r1["parse"], r1["bth_opcode"]), ("ok", None))
        self.assertEqual((r2["parse"], r2["udp_dport"], r2["bth_opcode"]), ("ok", 53, None))
        self.assertEqual(r3["parse"], "ethertype_unsupported")

    def test_pad_count(self):
        ok = rocepkt.roce(opcode=0x04, pad=3, payload=b"abcd")
        bad = rocepkt.roce(opcode=0x04, pad=3, payload=b"ab")
        r1, r2 = self.run_frames([ok, bad])
        self.assertEqual(r1["parse"], "ok")
        self.assertEqual(r2["parse"], "roce_bad_pad")


if __name__ == "__main__":
    unittest.main(verbosity=1)
