"""The same frames through every front end that runs the pipeline offline give the same verdict
per frame: `rocesw inspect --config` (the tables without a traffic manager) and `rocesw replay` of
the same one-switch config (tables and traffic manager; frames 10 µs apart so nothing queues).
Each frame's expected verdict is also written down by hand from docs/architecture.md's ingress
steps, so both are checked against it, not only against each other."""
import json
import os
import subprocess
import unittest

from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

import rocepkt
from common import ROCESW, inspect, tmpdir, write_pcap

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CONFIG = os.path.join(ROOT, "pcap-tests", "shared", "ecmp.yaml")
UPLINKS = {"Ethernet8", "Ethernet16", "Ethernet24", "Ethernet32"}


def roce(**kw):
    return bytes(rocepkt.roce(**kw))


def frames():
    """(frame bytes, expected verdict): an uplink name for forwarded frames (any of the group's
    members), or the drop / consume reason."""
    f = []
    for q in range(8):  # spread over the group by the 5-tuple hash
        f.append((roce(dqp=q, psn=q, sport=49152 + 17 * q, dst="10.2.0.%d" % (q + 1)),
                  "uplink"))
    f.append((roce(psn=100, ttl=1), "ttl_expired"))
    f.append((roce(psn=101, dst="10.9.0.1"), "lpm4_miss"))
    f.append((roce(psn=102, dst="239.1.1.1"), "ip_multicast"))
    f.append((roce(psn=103, dmac="02:00:00:00:99:99"), "dmac_not_router"))
    f.append((roce(psn=104, smac="03:00:00:00:10:01"), "smac_multicast"))
    f.append((roce(psn=105)[:20], "ipv4_truncated"))
    f.append((bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:10:01", type=0x8808) /
                    MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=10)),
              "pfc_consumed"))
    f.append((bytes(Ether(dst="01:80:c2:00:00:01", src="02:00:00:00:10:01", type=0x8808) /
                    MACControlPause(pause_time=0)), "pause_consumed"))
    f.append((roce(psn=106, ipv6=True, src="fd00:1::1", dst="fd00:2::1"), "lpm6_miss"))
    return f


def inspect_verdicts(pcap):
    return [r["drop"] or r["egress_port"] for r in inspect(pcap, "--config", CONFIG)]


def replay_verdicts(pcap, n, work):
    """Per input frame: the port whose capture holds it (matched by BTH PSN) or the reason of
    its drop event (in arrival order); MAC control frames by the count consumed."""
    out = os.path.join(work, "out")
    r = subprocess.run([ROCESW, "replay", "--config", CONFIG, "--in", "Ethernet0=" + pcap,
                        "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"rocesw replay failed ({r.returncode}): {r.stderr}")
    where = {}
    for port in UPLINKS:
        path = os.path.join(out, port + ".pcap")
        if os.path.exists(path):
            for p in rdpcap(path):
                raw = bytes(p)
                where[int.from_bytes(raw[14 + 20 + 8 + 9:14 + 20 + 8 + 12], "big")] = port
    drops = []
    with open(os.path.join(out, "events.jsonl")) as ev:
        for line in ev:
            e = json.loads(line)
            if e["event"] == "drop":
                drops.append((e["t"], e["reason"]))
            elif e["event"] in ("pfc_rx", "pause_rx"):
                drops.append((e["t"], e["event"].replace("_rx", "_consumed")))
    drops.sort()
    return where, [d[1] for d in drops]


class PipelineVerdicts(unittest.TestCase):
    def test_inspect_and_replay_agree(self):
        work = tmpdir()
        pcap = os.path.join(work, "in.pcap")
        fr = frames()
        pkts = []
        for i, (raw, _) in enumerate(fr):
            pkts.append(Ether(raw))
            pkts[-1].time = i * 10e-6
        write_pcap(pcap, pkts)
        got_inspect = inspect_verdicts(pcap)
        where, replay_drops = replay_verdicts(pcap, len(fr), work)
        expected_drops = []
        for i, (raw, want) in enumerate(fr):
            if want == "uplink":
                self.assertIn(got_inspect[i], UPLINKS, f"frame {i + 1}")
                self.assertEqual(where.get(i), got_inspect[i], f"frame {i + 1}: replay's port")
            else:
                self.assertEqual(got_inspect[i], want, f"frame {i + 1}")
                expected_drops.append(want)
        self.assertEqual(replay_drops, expected_drops)
        self.assertGreater(len(set(got_inspect[:8])), 1, "the hash spreads the flows")


class ReplayTrace(unittest.TestCase):
    """replay --trace FILTER traces exactly the arrivals the BPF filter matches (counted by hand
    from frames()), each with its verdict; a filter libpcap refuses is named, nothing runs."""

    def setUp(self):
        self.work = tmpdir()
        self.pcap = os.path.join(self.work, "in.pcap")
        pkts = []
        for i, (raw, _) in enumerate(frames()):
            pkts.append(Ether(raw))
            pkts[-1].time = i * 10e-6
        write_pcap(self.pcap, pkts)

    def replay(self, flt, out="out"):
        return subprocess.run([ROCESW, "replay", "--config", CONFIG, "--in",
                               "Ethernet0=" + self.pcap, "--out", os.path.join(self.work, out),
                               "--trace", flt], capture_output=True, text=True)

    def test_filter_selects_and_verdicts_follow(self):
        # dst 10.2.0.1: frame 1 (forwarded), then the ttl, dmac and smac cases (psn 100, 103,
        # 104); the truncated frame ends inside the IPv4 header, which the filter cannot read
        r = self.replay("ip dst 10.2.0.1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("trace: 4 arrivals matched 'ip dst 10.2.0.1' and were traced", r.stdout)
        with open(os.path.join(self.work, "out", "trace.jsonl")) as f:
            got = [json.loads(line) for line in f]
        self.assertEqual([g["verdict"] for g in got],
                         ["enqueued", "ttl_expired", "dmac_not_router", "smac_multicast"])
        self.assertTrue(got[0]["trace"][-1].startswith("tm: enqueue on Ethernet"))
        self.assertEqual([g["t_ns"] for g in got], [0, 80000, 110000, 120000])

    def test_bad_filter_is_named(self):
        r = self.replay("udp port nosuchport", out="bad")
        self.assertEqual(r.returncode, 2)
        self.assertIn("rocesw replay: --trace 'udp port nosuchport': ", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "bad", "events.jsonl")))


if __name__ == "__main__":
    unittest.main()
