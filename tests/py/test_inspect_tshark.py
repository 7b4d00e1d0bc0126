"""`rocesw inspect` agrees field by field with tshark (and, for BECN, which Wireshark 4.0 does
not dissect, with scapy) on a generated capture of RoCEv2 over IPv4/IPv6/VLAN, CNPs, PFC and
PAUSE frames and plain IP traffic."""
import os
import random
import unittest

from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import rocepkt
from common import inspect, tmpdir, tshark_fields, write_pcap

FIELDS = ["frame.number", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.dsfield.dscp",
          "ip.dsfield.ecn", "ipv6.tclass.dscp", "ipv6.tclass.ecn", "ip.ttl", "ipv6.hlim",
          "udp.srcport", "udp.dstport", "infiniband.bth.opcode", "infiniband.bth.destqp",
          "infiniband.bth.psn", "vlan.priority", "macc.cbfc.enbv"] + \
         [f"macc.cbfc.pause_time.c{i}" for i in range(8)] + ["macc.pause_time"]


def gen(n, seed=7):
    rnd = random.Random(seed)
    ops = sorted(rocepkt.OPCODES)
    frames = []
    for i in range(n):
        kind = rnd.random()
        if kind < 0.55:
            v6 = rnd.random() < 0.3
            frames.append(rocepkt.roce(
                opcode=rnd.choice(ops), dqp=rnd.randrange(1 << 24), psn=rnd.randrange(1 << 24),
                sport=rnd.randrange(49152, 65536), dscp=rnd.randrange(64), ecn=rnd.randrange(4),
                ttl=rnd.randrange(1, 256), ipv6=v6, becn=rnd.random() < 0.3,
                src="fd00:1::%x" % rnd.randrange(1, 999) if v6 else "10.1.%d.%d" % (rnd.randrange(256), rnd.randrange(256)),
                dst="fd00:2::%x" % rnd.randrange(1, 999) if v6 else "10.2.%d.%d" % (rnd.randrange(256), rnd.randrange(256)),
                vlans=[(rnd.randrange(8), rnd.randrange(1, 4095))] if rnd.random() < 0.3 else [],
                payload=bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 200)))))
        elif kind < 0.7:
            cev = rnd.randrange(256)
            times = {f"c{p}_pause_time": rnd.randrange(65536) for p in range(8)}
            bits = {f"c{p}_enabled": (cev >> p) & 1 for p in range(8)}
            frames.append(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09", type=0x8808) /
                          MACControlClassBasedFlowControl(**bits, **times))
        elif kind < 0.8:
            frames.append(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:00:09", type=0x8808) /
                          MACControlPause(pause_time=rnd.randrange(65536)))
        elif kind < 0.9:
            frames.append(Ether(dst="02:00:00:00:01:00", src="02:00:00:00:00:09") /
                          IP(src="10.9.0.1", dst="10.8.0.1", tos=rnd.randrange(256), ttl=rnd.randrange(1, 256)) /
                          UDP(sport=rnd.randrange(65536), dport=rnd.choice([53, 4789, 5000])) / Raw(b"u" * 30))
        else:
            frames.append(Ether(dst="02:00:00:00:01:00", src="02:00:00:00:00:09") /
                          IP(src="10.9.0.1", dst="10.8.0.1") / TCP(sport=rnd.randrange(65536), dport=443))
    return frames


def num(s):
    return int(s, 0) if s else None


class InspectVsTshark(unittest.TestCase):
    def test_fields_agree(self):
        d = tmpdir()
        frames = gen(600)
        path = write_pcap(os.path.join(d, "mix.pcap"), frames)
        ours = inspect(path)
        theirs = tshark_fields(path, FIELDS)
        self.assertEqual(len(ours), len(frames))
        self.assertEqual(len(theirs), len(frames))
        checked = 0
        for frame, o, t in zip(frames, ours, theirs):
            with self.subTest(frame=o["frame"]):
                self.assertEqual(o["parse"], "ok")
                self.assertEqual(o["frame"], num(t["frame.number"]))
                self.assertEqual(o["src_ip"], t["ip.src"] or t["ipv6.src"] or None)
                self.assertEqual(o["dst_ip"], t["ip.dst"] or t["ipv6.dst"] or None)
                self.assertEqual(o["dscp"], num(t["ip.dsfield.dscp"] or t["ipv6.tclass.dscp"]))
                self.assertEqual(o["ecn"], num(t["ip.dsfield.ecn"] or t["ipv6.tclass.ecn"]))
                self.assertEqual(o["ttl"], num(t["ip.ttl"] or t["ipv6.hlim"]))
                self.assertEqual(o["udp_sport"], num(t["udp.srcport"]))
                self.assertEqual(o["udp_dport"], num(t["udp.dstport"]))
                self.assertEqual(o["bth_opcode"], num(t["infiniband.bth.opcode"]))
                self.assertEqual(o["bth_dest_qp"], num(t["infiniband.bth.destqp"]))
                self.assertEqual(o["bth_psn"], num(t["infiniband.bth.psn"]))
                self.assertEqual(o["vlan_pcp"], num(t["vlan.priority"]))
                self.assertEqual(o["pfc_class_enable"], num(t["macc.cbfc.enbv"]))
                if o["pfc_class_enable"] is not None:
                    self.assertEqual(o["pfc_time"],
                                     [num(t[f"macc.cbfc.pause_time.c{i}"]) for i in range(8)])
                elif t["macc.pause_time"]:
                    self.assertEqual(o["pfc_time"], [num(t["macc.pause_time"])])
                else:
                    self.assertIsNone(o["pfc_time"])
                if o["bth_opcode"] is not None:
                    self.assertEqual(o["bth_becn"], BTH(bytes(frame[UDP].payload)).becn)
                checked += 1
        self.assertEqual(checked, len(frames))


if __name__ == "__main__":
    unittest.main(verbosity=1)
