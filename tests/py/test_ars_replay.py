"""ARS (docs/ars.md) in `rocesw replay`, checked against the captures it writes: one switch
sprays a flow's frames over three uplinks per packet; summary.json's ARS counters equal what
scapy reads from the uplinks' captures (a next-hop reassignment is a PSN that left by another
port than the PSN before it); a flowlet of back-to-back frames never moves; a config without
ARS has no `ars` key."""
import json
import os
import subprocess
import unittest

from scapy.utils import RawPcapReader

import rocepkt
from common import ROCESW, tmpdir, write_pcap

UPLINKS = ["Ethernet8", "Ethernet16", "Ethernet24"]
N = 60

CONFIG = """
DEVICE_METADATA:
  localhost: {{hostname: ars, mac: "02:00:00:00:01:00"}}
PORT:
  Ethernet0: {{speed: 100000, role: host}}
  Ethernet8: {{speed: 100000, role: uplink}}
  Ethernet16: {{speed: 100000, role: uplink}}
  Ethernet24: {{speed: 100000, role: uplink}}
NEIGH:
  "Ethernet8|10.255.0.1": {{neigh: "02:00:00:00:20:01"}}
  "Ethernet16|10.255.0.3": {{neigh: "02:00:00:00:20:03"}}
  "Ethernet24|10.255.0.5": {{neigh: "02:00:00:00:20:05"}}
{ars}NEXTHOP_GROUP:
  uplinks: {{nexthop: "10.255.0.1,10.255.0.3,10.255.0.5"{ars_ref}}}
STATIC_ROUTE:
  "10.2.0.0/16": {{nexthop_group: uplinks}}
"""


def ars_tables(mode):
    return ("ARS_PROFILE:\n  default: {random_seed: 11}\n"
            f"ARS_OBJECT:\n  a: {{assign_mode: {mode}, match_l4_dst_port: 4791}}\n")


def psns(path):
    """(PSN, port index) of every frame of a capture: BTH bytes 9-11 after Ethernet/IPv4/UDP."""
    r = RawPcapReader(path)
    try:
        return [int.from_bytes(d[14 + 20 + 8 + 9:14 + 20 + 8 + 12], "big") for d, _ in r]
    finally:
        r.close()


class ArsReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.pcap = os.path.join(cls.dir, "in.pcap")
        frames = [rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152, dqp=0x100, psn=i,
                               payload=bytes(1000)) for i in range(N)]
        for i, f in enumerate(frames):
            f.time = 1 + i * 1e-6  # 1 us apart: far below the 256 us idle time
        write_pcap(cls.pcap, frames)

    def replay(self, name, mode):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(ars=ars_tables(mode) if mode else "",
                                  ars_ref=", ars_object: a" if mode else ""))
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out,
                            "--in", f"Ethernet0={self.pcap}"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return out, json.load(f), r.stdout

    def port_of_psn(self, out):
        port = {}
        for i, name in enumerate(UPLINKS):
            for psn in psns(os.path.join(out, f"{name}.pcap")):
                self.assertNotIn(psn, port, "every frame leaves once")
                port[psn] = i
        self.assertEqual(sorted(port), list(range(N)))
        return port

    def test_per_packet_counters_match_captures(self):
        out, s, text = self.replay("spray", "per_packet_random")
        port = self.port_of_psn(out)
        moves = sum(port[i] != port[i - 1] for i in range(1, N))
        self.assertGreater(moves, 0)
        self.assertGreater(len(set(port.values())), 1, "sprayed over more than one uplink")
        (g,) = s["ars"]
        self.assertEqual((g["group"], g["object"], g["mode"]), ("uplinks", "a", "per_packet_random"))
        self.assertEqual(g["RSW_ARS_PACKETS"], N)
        # one member per port: every next-hop move is a port move
        self.assertEqual(g["SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS"], moves)
        self.assertEqual(g["SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS"], moves)
        self.assertEqual(g["SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS"], 0)
        self.assertEqual(g["RSW_ARS_FLOWLET_TABLE_FULL"], 0)
        self.assertIn(f"ars uplinks per_packet_random: {N} packets, {moves} next-hop and {moves} "
                      "port reassignments, 0 drops, 0 flowlet table full", text)

    def test_flowlet_back_to_back_stays(self):
        out, s, _ = self.replay("flowlet", "per_flowlet_quality")
        self.assertEqual(len(set(self.port_of_psn(out).values())), 1)
        (g,) = s["ars"]
        self.assertEqual(g["RSW_ARS_PACKETS"], N)
        self.assertEqual(g["SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS"], 0)

    def test_no_ars_no_key(self):
        out, s, text = self.replay("plain", None)
        self.assertNotIn("ars", s)
        self.assertNotIn("\nars ", text)


if __name__ == "__main__":
    unittest.main()
