"""Frames each broken in one way, with the drop reason REFERENCE §1's layout predicts (Ethernet
14 bytes, IPv4 20, UDP 8, BTH 12, RETH 16), between two good frames; written as in.pcap and the
expected reasons, one per line, as expected.txt ("ok" = forwarded)."""
import struct

import lib
import rocepkt
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

good = bytes(rocepkt.roce(dqp=0x10, dst="10.2.0.1"))
first = bytes(rocepkt.roce(opcode=0x06, dqp=0x11, dst="10.2.0.1", payload=bytes(64)))  # WRITE FIRST


def with_ip(raw, **kw):
    """raw with IPv4 header fields changed and the checksum recomputed unless told."""
    p = Ether(raw)
    for k, v in kw.items():
        setattr(p[IP], k, v)
    if "chksum" not in kw:
        del p[IP].chksum
    return bytes(p)


bad_udp_len = bytearray(good)
bad_udp_len[38:40] = struct.pack("!H", 4)  # UDP length shorter than its header
cases = [
    (good, "ok"),
    (good[:10], "eth_truncated"),
    (good[:30], "ipv4_truncated"),
    (good[:40], "udp_truncated"),
    (good[:50], "bth_truncated"),
    (first[:60], "reth_truncated"),
    (with_ip(good, chksum=0x1234), "ipv4_bad_checksum"),
    (with_ip(good, version=5), "ipv4_bad_version"),
    (bytes(bad_udp_len), "udp_bad_length"),
    (bytes(rocepkt.roce(opcode=0x1F, dqp=0x12, dst="10.2.0.1")), "bth_bad_opcode"),
    (bytes(rocepkt.roce(dqp=0x13, dst="10.2.0.1", dmac="02:00:00:00:99:99")), "dmac_not_router"),
    (bytes(rocepkt.roce(dqp=0x14, dst="239.1.1.1")), "ip_multicast"),
    (bytes(Ether(src="02:00:00:00:10:01", dst="02:00:00:00:01:00", type=0x88B5) / Raw(bytes(50))),
     "ethertype_unsupported"),
    (bytes(rocepkt.roce(dqp=0x15, dst="10.9.0.1")), "lpm4_miss"),
    (good, "ok"),
]
lib.write(lib.work("in.pcap"), [(1000 * i, raw) for i, (raw, _) in enumerate(cases)])
with open(lib.work("expected.txt"), "w") as f:
    f.write("\n".join(r for _, r in cases) + "\n")
