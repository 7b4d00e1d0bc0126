"""`rocesw replay` of generated captures through one switch on virtual time: every frame leaves
the 10G port back to back, each departure at the wire time of the frames before it
(REFERENCE §3: frame + 24 bytes, 100 ps per bit at 10G); frames are routed (TTL - 1, MACs, ICRC
still valid); a small lossless threshold makes the switch send PFC XOFF then XON to both senders
(read by tshark); runs are byte-identical; counters add up; bad inputs are refused."""
import filecmp
import json
import math
import os
import subprocess
import unittest

from scapy.utils import RawPcapReader

import rocepkt
from common import ROCESW, tmpdir

CONFIG = """
DEVICE_METADATA:
  localhost: {hostname: rp, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000, role: host}
  Ethernet8: {speed: 100000, role: host}
  Ethernet16: {speed: 10000, role: host}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
"""
PFC = """
PORT_QOS_MAP:
  Ethernet0: {pfc_enable: "3", pfc_pause_time: 1000}
  Ethernet8: {pfc_enable: "3", pfc_pause_time: 1000}
BUFFER_PROFILE:
  small: {pool: ingress_lossless_pool, size: 600000, static_th: 20000, xoff: 590000,
          xon: 10000, xon_offset: 10000}
BUFFER_PG:
  "Ethernet0|3": {profile: small}
  "Ethernet8|3": {profile: small}
"""


def read(path):
    reader = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, d) for d, m in reader]
    finally:
        reader.close()


class Replay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.gen = os.path.join(cls.dir, "gen")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--message", "262144", "--out", cls.gen], check=True, capture_output=True)

    def replay(self, name, extra=""):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG + extra)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out,
                            "--in", f"Ethernet0={self.gen}/h0.pcap",
                            "--in", f"Ethernet8={self.gen}/h1.pcap"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return out, json.load(f)

    def test_departures_at_wire_time(self):
        out, summary = self.replay("plain")
        sent = read(f"{self.gen}/h0.pcap") + read(f"{self.gen}/h1.pcap")
        got = read(os.path.join(out, "Ethernet16.pcap"))
        self.assertEqual(len(got), len(sent))
        # the 10G port never idles once the first frame arrived at t = 0
        bits = 0
        for t, raw in got:
            self.assertEqual(t, math.ceil(bits * 100 / 1000), "departure = wire time so far")
            bits += (len(raw) + 24) * 8
        for _, raw in got:
            self.assertEqual(raw[22], 63, "TTL decremented")
            self.assertEqual(raw[0:6], bytes.fromhex("020000010002"))
            self.assertEqual(raw[6:12], bytes.fromhex("020000000100"))
            self.assertEqual(rocepkt.icrc(raw[14:]), raw[-4:])
        c = summary["conservation"]
        self.assertTrue(c["holds"])
        self.assertEqual((c["received"], c["transmitted"], c["dropped"]), (len(sent), len(sent), 0))
        self.assertEqual(summary["end_ns"], got[-1][0])
        # per-flow completion: first arrival in the input capture to the last bit of the flow's
        # last frame on the 10G port
        flows = {f["src"]: f for f in summary["flows"]}
        self.assertEqual(set(flows), {"10.1.0.1", "10.1.0.3"})
        for h, src in ((0, "10.1.0.1"), (1, "10.1.0.3")):
            ins = read(f"{self.gen}/h{h}.pcap")
            outs = [(t, raw) for t, raw in got if raw[26:30] == bytes(map(int, src.split(".")))]
            last_t, last_raw = outs[-1]
            # its last bit: frame + FCS + preamble, without the inter-frame gap
            done = last_t + math.ceil((max(len(last_raw), 60) + 12) * 8 * 100 / 1000)
            f = flows[src]
            self.assertEqual((f["packets_in"], f["packets_out"]), (len(ins), len(outs)))
            self.assertEqual(f["start_ns"], ins[0][0])
            self.assertEqual(f["done_ns"], done)
            self.assertEqual(f["completion_ns"], done - ins[0][0])

    def test_pfc_xoff_xon_and_determinism(self):
        out, summary = self.replay("pfc", PFC)
        for port in ("Ethernet0", "Ethernet8"):
            r = subprocess.run(["tshark", "-n", "-r", os.path.join(out, f"{port}.pcap"), "-T",
                                "fields", "-e", "macc.cbfc.enbv", "-e", "macc.cbfc.pause_time.c3"],
                               capture_output=True, text=True, check=True)
            rows = [line.split("\t") for line in r.stdout.splitlines()]
            self.assertGreaterEqual(len(rows), 2, port)
            self.assertEqual(int(rows[0][0], 0), 0x08)
            self.assertEqual(int(rows[0][1]), 1000, "XOFF with the port's pause time")
            self.assertEqual(int(rows[-1][1]), 0, "XON last")
        self.assertEqual(summary["drops"], {}, "lossless: nothing dropped")
        # the event log says the same: one pfc_tx line per PFC frame, at the frame's time
        with open(os.path.join(out, "events.jsonl")) as f:
            events = [json.loads(line) for line in f]
        for port in ("Ethernet0", "Ethernet8"):
            frames = [(t, raw) for t, raw in read(os.path.join(out, f"{port}.pcap"))
                      if raw[12:14] == b"\x88\x08"]
            logged = [e for e in events if e["event"] == "pfc_tx" and e["port"] == port]
            self.assertEqual([e["t"] for e in logged], [t for t, _ in frames])
            self.assertEqual([e["time"][3] for e in logged],
                             [int.from_bytes(raw[24:26], "big") for _, raw in frames])
        depth = [e for e in events if e["event"] == "queue_depth"]
        self.assertTrue(depth and all(e["port"] == "Ethernet16" and e["queue"] == 3 for e in depth))
        out2, _ = self.replay("pfc-again", PFC)
        for f in sorted(os.listdir(out)):
            self.assertTrue(filecmp.cmp(os.path.join(out, f), os.path.join(out2, f), shallow=False),
                            f"{f} differs between two runs")

    def test_bad_inputs(self):
        cfg = os.path.join(self.dir, "bad.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG)
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", tmpdir(),
                            "--in", f"Ethernet99={self.gen}/h0.pcap"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no port named 'Ethernet99'", r.stderr)
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", tmpdir(),
                            "--in", "Ethernet0=/nonexistent.pcap"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(),
                         "rocesw replay: /nonexistent.pcap: No such file or directory",
                         "the file named once, with the system's reason")
        garbage = os.path.join(self.dir, "garbage.pcap")
        with open(garbage, "wb") as f:
            f.write(b"not a capture at all")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", tmpdir(),
                            "--in", f"Ethernet0={garbage}"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), f"rocesw replay: {garbage}: unknown file format")


class PathCounts(unittest.TestCase):
    """A flow's per-link counts past 4 GiB: the first links of a path are counted in 32 bits in
    the flow's hot line, each carry going into the path's record (dataplane/replay/
    replay_engine.c, flow_hop). A ring over two hosts of zone-2stage, 4.5 GiB: each rank sends
    the whole message once, so each flow carries at least 4,831,838,208 payload bytes (more than
    2^32) and, at a 4 KiB RoCE MTU, less than 5 % more in headers; nothing is dropped, so every
    link of its path carries exactly what entered it."""

    def test_counts_past_4_gib(self):
        out = os.path.join(tmpdir(), "o")
        zone = os.path.join(os.path.dirname(__file__), "..", "..", "config", "zone-2stage.yaml")
        r = subprocess.run([ROCESW, "replay", "--config", zone, "--collective",
                            "ring,size=4608M,ranks=2", "--captures", "none", "--quiet",
                            "--out", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            flows = json.load(f)["flows"]
        payload = 4608 << 20
        self.assertEqual(len(flows), 2)
        for fl in flows:
            self.assertGreaterEqual(fl["bytes_in"], payload)
            self.assertLess(fl["bytes_in"], payload * 1.05)
            self.assertEqual(len(fl["path"]), 4)
            for hop in fl["path"]:
                self.assertEqual(hop["bytes"], fl["bytes_in"], hop)
                self.assertEqual(hop["packets"], fl["packets_in"], hop)


if __name__ == "__main__":
    unittest.main(verbosity=1)
