"""`rocesw gen` writes per-host captures that scapy and tshark read as valid RoCEv2 (ICRC by the
independent rocepkt implementation, IPv4 checksum by tshark), with the structure each pattern
implies (destinations, message split into FIRST/MIDDLE/LAST or ONLY, PSN per QP, QP numbers,
Linux or fixed source ports by REFERENCE §1's formula), wire-time spacing at the link speed, and
clear-to-send packets ahead of each step's data in receiver-driven mode."""
import math
import os
import subprocess
import unittest

from scapy.utils import RawPcapReader

import rocepkt
from common import ROCESW, tmpdir

QPN_BASE = 0x100


def ip(i):
    return f"10.1.0.{1 + 2 * i}"


def read(path):
    """[(time_ns, raw bytes)] of a nanosecond pcap."""
    out = []
    reader = RawPcapReader(path)
    try:
        for data, meta in reader:
            out.append((meta.sec * 10**9 + meta.usec, data))
    finally:
        reader.close()
    return out


def fields(raw):
    ip_ = raw[14:34]
    udp = raw[34:42]
    bth = raw[42:54]
    return {"src": ".".join(map(str, ip_[12:16])), "dst": ".".join(map(str, ip_[16:20])),
            "dscp": ip_[1] >> 2, "ecn": ip_[1] & 3, "sport": int.from_bytes(udp[:2], "big"),
            "opcode": bth[0], "qp": int.from_bytes(bth[5:8], "big"),
            "psn": int.from_bytes(bth[9:12], "big")}


class Gen(unittest.TestCase):
    def gen(self, *args):
        d = tmpdir()
        r = subprocess.run([ROCESW, "gen", "--out", d, *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return d

    def test_ring_rr_linux(self):
        n, qps, msg = 4, 2, 65536
        d = self.gen("--pattern", "ring", "--hosts", str(n), "--message", str(msg),
                     "--qps", str(qps), "--mtu", "4096")
        per_msg = msg // n // 4096
        for h in range(n):
            path = os.path.join(d, f"h{h}.pcap")
            pkts = read(path)
            self.assertEqual(len(pkts), 2 * (n - 1) * per_msg)
            psn = {}
            for k, (t, raw) in enumerate(pkts):
                f = fields(raw)
                self.assertEqual((f["src"], f["dst"]), (ip(h), ip((h + 1) % n)))
                self.assertEqual(rocepkt.icrc(raw[14:]), raw[-4:], "valid ICRC")
                self.assertEqual((f["dscp"], f["ecn"]), (3, 2))
                q = f["qp"] - QPN_BASE - h * qps
                self.assertIn(q, range(qps))
                self.assertEqual(q, (k // per_msg) % qps, "messages round-robin over QPs")
                lqpn = QPN_BASE + ((h + 1) % n) * qps + q
                self.assertEqual(f["sport"], rocepkt.linux_sport(lqpn, f["qp"]))
                self.assertEqual(f["psn"], psn.get(q, 0), "PSN consecutive per QP")
                psn[q] = f["psn"] + 1
                pos = k % per_msg
                want = 0x06 if pos == 0 else 0x08 if pos == per_msg - 1 else 0x07
                self.assertEqual(f["opcode"], want)
                if pos:  # back to back inside a message: the wire time at 400G
                    wire = (len(pkts[k - 1][1]) + 24) * 8 / 400e9 * 1e9
                    self.assertEqual(t - pkts[k - 1][0], math.ceil(wire))
        out = subprocess.run(["tshark", "-n", "-r", os.path.join(d, "h0.pcap"), "-o",
                              "ip.check_checksum:TRUE", "-T", "fields", "-e", "ip.checksum.status",
                              "-e", "infiniband.bth.opcode"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        rows = [r.split("\t") for r in out if r]
        self.assertEqual({r[0] for r in rows}, {"1"}, "tshark: IPv4 checksum good")
        self.assertEqual({r[1] for r in rows}, {"6", "7", "8"})

    def test_split_fixed_port(self):
        d = self.gen("--pattern", "ring", "--hosts", "3", "--message", str(3 * 16384),
                     "--qps", "4", "--qp-mode", "split", "--sport", "fixed")
        pkts = read(os.path.join(d, "h0.pcap"))
        self.assertEqual(len(pkts), 2 * 2 * 4)  # 4 steps x 4 QPs x one ONLY packet of 4096
        for k, (_, raw) in enumerate(pkts):
            f = fields(raw)
            self.assertEqual(f["opcode"], 0x0A)
            self.assertEqual(f["sport"], 49152)
            self.assertEqual(f["qp"], QPN_BASE + k % 4)
            self.assertEqual(f["psn"], k // 4)

    def test_incast_and_all_to_all(self):
        d = self.gen("--pattern", "incast", "--hosts", "5", "--message", "8192", "--mtu", "1024",
                     "--root", "2")
        self.assertEqual(read(os.path.join(d, "h2.pcap")), [])
        for h in (0, 1, 3, 4):
            pkts = read(os.path.join(d, f"h{h}.pcap"))
            self.assertEqual(len(pkts), 8)
            self.assertTrue(all(fields(r)["dst"] == ip(2) for _, r in pkts))
        d = self.gen("--pattern", "all-to-all", "--hosts", "4", "--message", "4096", "--mtu", "1024")
        for h in range(4):
            dsts = [fields(r)["dst"] for _, r in read(os.path.join(d, f"h{h}.pcap"))]
            self.assertEqual(sorted(set(dsts)), sorted(ip(j) for j in range(4) if j != h))
            self.assertEqual(len(dsts), 3)

    def test_tree(self):
        """Binary tree over 7 ranks: leaves 3..6 send up first, then 1 and 2; then 0 sends
        down to 1 and 2, and they to their children; every transfer the whole message."""
        d = self.gen("--pattern", "tree", "--hosts", "7", "--message", "8192", "--mtu", "4096")
        pk = {h: [(t, fields(r)) for t, r in read(os.path.join(d, f"h{h}.pcap"))] for h in range(7)}
        parent = {i: (i - 1) // 2 for i in range(1, 7)}
        for h in range(7):
            dsts = [f["dst"] for _, f in pk[h]]
            up = [ip(parent[h])] * 2 if h else []
            down = [ip(c) for c in (2 * h + 1, 2 * h + 2) if c < 7]
            self.assertEqual(sorted(dsts), sorted(up + down * 2), h)
        # reduce before broadcast: a rank sends down only after all of its children sent up
        for h in (0, 1, 2):
            kids = [c for c in (2 * h + 1, 2 * h + 2) if c < 7]
            last_up = max(t for c in kids for t, f in pk[c] if f["dst"] == ip(h))
            first_down = min(t for t, f in pk[h] if f["dst"] in {ip(c) for c in kids})
            self.assertLess(last_up, first_down)

    def test_receiver_driven(self):
        n = 4
        d = self.gen("--pattern", "ring", "--hosts", str(n), "--message", str(n * 8192),
                     "--receiver-driven")
        pk = {h: read(os.path.join(d, f"h{h}.pcap")) for h in range(n)}
        for h in range(n):
            sender = (h - 1) % n
            cts = [(t, fields(r)) for t, r in pk[h] if fields(r)["dscp"] == 48]
            data = [(t, fields(r)) for t, r in pk[sender] if fields(r)["dscp"] == 3]
            self.assertEqual(len(cts), 2 * (n - 1), "one CTS per chunk")
            for c_t, c in cts:
                self.assertEqual(c["opcode"], 0x04)
                self.assertEqual(c["dst"], ip(sender))
            # the k-th chunk's first data packet leaves after the k-th CTS
            firsts = [t for t, f in data if f["opcode"] in (0x06, 0x0A)]
            self.assertEqual(len(firsts), len(cts))
            for (c_t, _), f_t in zip(cts, firsts):
                self.assertLess(c_t, f_t)
            for _, raw in pk[h]:
                self.assertEqual(rocepkt.icrc(raw[14:]), raw[-4:])

    def test_bad_arguments(self):
        for args, msg in ((["--pattern", "butterfly", "--hosts", "4"], "--pattern expects ring"),
                          (["--pattern", "ring", "--hosts", "1"], "--hosts expects a number 2..512"),
                          (["--pattern", "ring", "--hosts", "4", "--mtu", "1000"],
                           "--mtu must be 256, 512"),
                          (["--pattern", "incast", "--hosts", "4", "--root", "7"],
                           "--root 7: there are 4 hosts")):
            r = subprocess.run([ROCESW, "gen", "--out", tmpdir(), *args], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(msg, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
