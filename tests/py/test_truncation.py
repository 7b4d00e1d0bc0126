"""Every truncation point of RoCEv2 frames yields the reason naming the header cut short.

The expected reason for a frame cut to L bytes comes from the header layout of REFERENCE §1:
the first header whose end lies beyond L. Run by scripts/test.sh under AddressSanitizer too."""
import os
import unittest

from scapy.utils import PcapWriter

import rocepkt
from common import inspect, tmpdir

CASES = [
    # opcode, vlans, ipv6
    (0x0B, [(3, 100)], False),  # RETH, IMMDT
    (0x12, [], False),          # AETH, AtomicAckETH
    (0x13, [], True),           # AtomicETH, over IPv6
    (0x43, [], False),          # RD: RDETH, DETH, IMMDT
    (0x17, [], False),          # IETH
    (0x1C, [], False),          # FETH, RETH
    (0x65, [], False),          # UD: DETH, IMMDT
    (0x81, [], False),          # CNP
]


def layout(opcode, n_vlans, ipv6):
    """[(end offset, reason if the frame ends before it)] in wire order."""
    out = [(14, "eth_truncated")]
    off = 14
    for _ in range(n_vlans):
        off += 4
        out.append((off, "vlan_truncated"))
    off += 40 if ipv6 else 20
    out.append((off, "ipv6_truncated" if ipv6 else "ipv4_truncated"))
    off += 8
    out.append((off, "udp_truncated"))
    off += 12
    out.append((off, "bth_truncated"))
    for name, n in rocepkt.OPCODES[opcode]:
        off += n
        out.append((off, f"{name}_truncated"))
    return out


def expected(cut, total, lay):
    if cut == total:
        return "ok"
    for end, reason in lay:
        if cut < end:
            return reason
    return "icrc_truncated"  # headers complete, payload or ICRC missing


class TruncationTest(unittest.TestCase):
    def test_every_cut(self):
        d = tmpdir()
        for opcode, vlans, ipv6 in CASES:
            kw = dict(src="fd00:1::1", dst="fd00:2::1") if ipv6 else {}
            payload = b"" if opcode == 0x81 else b"\x5a" * 20
            full = bytes(rocepkt.roce(opcode=opcode, vlans=vlans, ipv6=ipv6, payload=payload, **kw))
            path = os.path.join(d, f"cut-{opcode:02x}.pcap")
            with PcapWriter(path, linktype=1) as w:  # raw bytes: scapy would re-pad short frames
                for n in range(len(full) + 1):
                    w.write(full[:n])
            recs = inspect(path)
            self.assertEqual(len(recs), len(full) + 1)
            lay = layout(opcode, len(vlans), ipv6)
            for n, r in enumerate(recs):
                with self.subTest(opcode=hex(opcode), cut=n):
                    self.assertEqual(r["parse"], expected(n, len(full), lay))


if __name__ == "__main__":
    unittest.main(verbosity=1)
