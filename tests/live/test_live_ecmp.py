"""Live: a host in a network namespace sends RoCEv2 through rocesw-dataplane (af_packet ports on
veth pairs) to 4 ECMP uplinks, each a namespace capturing with tcpdump. Flows that differ only in
destination QP leave by one uplink under a 5-tuple policy and spread over all 4 under the
destination-QP policy. Every forwarded packet is checked as its receiver sees it (TTL - 1, valid
IPv4 checksum per tshark, rewritten MACs, unchanged and still valid ICRC), and the switch's
counters must satisfy received = transmitted + dropped + consumed + queued. The test sends from
a raw socket in the host's namespace, waits on the control socket until the switch has sent every
frame on, and on each capture until it holds what the switch sent on that link."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import dataplane_cmd, require_root, tmpdir, tshark_fields  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Control, Lab, finish,  # noqa: E402
                    four_uplink_config, pcap_count, send, wait_captured, wait_drained, wait_for_line)

N_QP, PER_QP = 32, 8

HASH = """SWITCH_HASH:
  GLOBAL: {ecmp_hash: [SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT], ecmp_hash_algorithm: CRC}
HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    fields: [SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT]
    udf: [{base: L4, offset: 13, length: 3, match: {l4_dst_port: 4791}}]"""


class LiveEcmp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        # all flows share addresses and a fixed source port: only the QP tells them apart
        frames = []
        for k in range(PER_QP):
            for qp in range(1, N_QP + 1):
                frames.append(rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152,
                                           dqp=0x1000 + qp, psn=k, ttl=64, smac=HOST_MAC,
                                           dmac=ROUTER_MAC, payload=bytes([qp]) * 64))
        cls.frames = frames

    def run_switch(self, policy):
        d = os.path.join(self.dir, policy)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(four_uplink_config("rswl", "live-rtsw", HASH, f"hash_policy: {policy}"))
        lab = Lab("rswl")
        try:
            h0 = lab.host("h0", "rswl-h0", HOST_MAC)
            ups = [lab.host(f"u{i}", f"rswl-u{i}", UPLINK_MACS[i]) for i in range(4)]
            stats = os.path.join(d, "stats.json")
            sock = os.path.join(d, "dp.sock")
            dp = lab.start(dataplane_cmd("rswlive", "--config", cfg, "--stats-json", stats,
                                         "--control-socket", sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding")
            caps = [os.path.join(d, f"u{i}.pcap") for i in range(4)]
            tcpdumps = [lab.capture(ns, path) for ns, path in zip(ups, caps)]
            send(lab.socket(h0), self.frames, 0.0005)
            live = wait_drained(Control(sock), len(self.frames))
            for i, cap in enumerate(caps):
                wait_captured(cap, next(p["tx_packets"] for p in live["ports"]
                                        if p["name"] == f"Ethernet{8 * (i + 1)}"))
            counters, _ = finish(self, dp, tcpdumps, stats)
            return caps, counters
        finally:
            lab.close()

    def check_forwarded(self, caps, counters):
        per_uplink = [rdpcap(c) if pcap_count(c) else [] for c in caps]
        total = sum(len(p) for p in per_uplink)
        self.assertEqual(total, len(self.frames), "every packet reaches an uplink")
        cons = counters["conservation"]
        self.assertTrue(cons["holds"], cons)
        self.assertEqual(cons["received"],
                         cons["transmitted"] + cons["dropped"] + cons["consumed"] + cons["queued"])
        ports = {p["name"]: p for p in counters["ports"]}
        self.assertEqual(ports["Ethernet0"]["rx_packets"] - sum(counters["drops"].values()),
                         len(self.frames),
                         f"drops {dict((k, v) for k, v in counters['drops'].items() if v)}, "
                         f"rx {dict((n, p['rx_packets']) for n, p in ports.items())}")
        self.assertEqual(sum(ports[f"Ethernet{8 * (i + 1)}"]["tx_packets"] for i in range(4)),
                         len(self.frames))
        qp_to_uplink = {}
        for i, (pkts, cap) in enumerate(zip(per_uplink, caps)):
            self.assertEqual(ports[f"Ethernet{8 * (i + 1)}"]["tx_packets"], len(pkts))
            if not pkts:
                continue
            ts = tshark_fields(cap, ["ip.ttl", "ip.checksum.status", "eth.src", "eth.dst",
                                     "infiniband.bth.destqp"],
                               decode_as=())
            for p, t in zip(pkts, ts):
                self.assertEqual(t["ip.ttl"], "63")
                self.assertEqual(t["eth.src"], ROUTER_MAC)
                self.assertEqual(t["eth.dst"], UPLINK_MACS[i])
                raw = bytes(p)[14:]
                self.assertEqual(rocepkt.icrc(raw), raw[-4:], "ICRC still valid after routing")
                qp = int(t["infiniband.bth.destqp"], 16)
                self.assertEqual(qp_to_uplink.setdefault(qp, i), i, "a flow stays on one uplink")
            # tshark validates the IPv4 header checksum when asked to
            chk = subprocess.run(["tshark", "-n", "-r", cap, "-o", "ip.check_checksum:TRUE",
                                  "-T", "fields", "-e", "ip.checksum.status"],
                                 capture_output=True, text=True, check=True).stdout.split()
            self.assertEqual(set(chk), {"1"}, "tshark: IPv4 checksum status good (1)")
        self.assertEqual(len(qp_to_uplink), N_QP)
        return per_uplink

    def test_five_tuple_vs_dest_qp(self):
        caps, counters = self.run_switch("default")
        per = self.check_forwarded(caps, counters)
        self.assertEqual(sorted(len(p) for p in per), [0, 0, 0, len(self.frames)],
                         "5-tuple: flows differing only in QP share one uplink")
        caps, counters = self.run_switch("dest_qp")
        per = self.check_forwarded(caps, counters)
        self.assertTrue(all(len(p) > 0 for p in per), "destination-QP policy uses all 4 uplinks")
        # each uplink carries whole flows: its packet count is a multiple of PER_QP
        self.assertTrue(all(len(p) % PER_QP == 0 for p in per))
        members = counters["ecmp_groups"][0]["members"]
        self.assertEqual(sorted(m["packets"] for m in members), sorted(len(p) for p in per))


if __name__ == "__main__":
    unittest.main(verbosity=1)
