"""A zone live never runs out of packet memory (docs/dataplane.md, "A zone live"): every frame a
host hands the zone is received by its switch and then forwarded, queued or dropped with a
counted reason. tests/configs/zone-pfc with h0 on a pcap port that dumps 60,000 small frames of
the lossless priority 3 at once (a host ignoring PFC, faster than any link), and rtsw1 given 8
more ports connected to nothing, each of which adds to what its traffic manager may hold. h0's
PG has a generous dynamic threshold (alpha 8), so rtsw1 admits packets until its descriptors
say stop, then the headroom, then drops as headroom_overflow. Before, the packet memory counted
1024 frames per link or unconnected port while the traffic manager let each hold 4096: rtsw1
held more frames than the pool had, the pcap port found no mbuf and its frames vanished
(neither received nor counted). Hosts on DPDK pcap ports: no namespaces needed."""
import json
import os
import struct
import subprocess
import unittest

import yaml

import rocepkt
from common import DATAPLANE, ROOT, tmpdir

ZONE = os.path.join(ROOT, "tests", "configs", "zone-pfc", "zone.yaml")
EAL = ["--no-huge", "-m", "1024", "--no-pci", "-l", "0-1", "--no-shconf"]
N = 60000
EXTRA_PORTS = 8


def write_same(path, frame, n):
    """A pcap of n copies of frame (written directly: scapy takes long for 60,000)."""
    rec = struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.write(rec * n)


class ZoneLossless(unittest.TestCase):
    def test_no_frame_lost_for_packet_memory(self):
        d = tmpdir()
        with open(ZONE) as f:
            z = yaml.safe_load(f)
        cfg = {}
        for name, s in z["SWITCH"].items():
            with open(os.path.join(os.path.dirname(ZONE), s["config"])) as f:
                cfg[name] = yaml.safe_load(f)
            s["config"] = os.path.join(d, f"{name}.yaml")
        r1 = cfg["rtsw1"]
        for i in range(EXTRA_PORTS):
            r1["PORT"][f"Ethernet{8 * (i + 1)}"] = {"speed": 20, "role": "host", "mtu": 1500}
        prof = r1["BUFFER_PROFILE"]["pg_lossless_host"]
        del prof["static_th"]
        prof["dynamic_th"] = 3
        for name, c in cfg.items():
            with open(os.path.join(d, f"{name}.yaml"), "w") as f:
                yaml.safe_dump(c, f)
        mac, gw = "02:00:00:01:00:00", r1["PORT"]["Ethernet0"]["mac"]
        frame = bytes(rocepkt.roce(opcode=0x04, src="10.1.0.1", dst="10.1.0.5", dqp=0x100,
                                   psn=1, dscp=3, smac=mac, dmac=gw, payload=b"\0\0"))
        write_same(os.path.join(d, "h0.pcap"), frame, N)
        for h in z["HOST"]:
            rx = os.path.join(d, "h0.pcap") if h == "h0" else os.path.join(d, "empty.pcap")
            if h != "h0":
                write_same(rx, frame, 0)
            z["HOST"][h] = {"devargs": f"net_pcap_{h},rx_pcap={rx},"
                                       f"tx_pcap={os.path.join(d, h + '-out.pcap')}"}
        zone = os.path.join(d, "zone.yaml")
        with open(zone, "w") as f:
            yaml.safe_dump(z, f)
        stats = os.path.join(d, "s.json")
        r = subprocess.run([DATAPLANE, *EAL, "--file-prefix", f"zonell-{os.getpid()}", "--",
                            "--zone", zone, "--duration", "3", "--stats-json", stats],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(stats) as f:
            c = {s["name"]: s for s in json.load(f)["switches"]}
        e0 = next(p for p in c["rtsw1"]["ports"] if p["name"] == "Ethernet0")
        self.assertEqual(e0["rx_packets"], N, "every frame h0 sent was received by rtsw1")
        drops = {k: v for k, v in c["rtsw1"]["drops"].items() if v}
        self.assertEqual(list(drops), ["headroom_overflow"], drops)
        self.assertGreater(drops["headroom_overflow"], 0, "h0 ignored PFC: its PG overflowed")
        for name, s in c.items():
            self.assertTrue(s["conservation"]["holds"], (name, s["conservation"]))
            self.assertTrue(s["conservation"]["lossless_holds"], (name, s["conservation"]))
            if name != "rtsw1":
                self.assertEqual({k: v for k, v in s["drops"].items() if v}, {}, name)
            for p in s["ports"]:
                self.assertEqual(p["pfc"]["pfc_tx_failed"], 0, (name, p["name"]))


if __name__ == "__main__":
    unittest.main(verbosity=1)
