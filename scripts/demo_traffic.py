#!/usr/bin/python3
"""Demo input: two host NICs each send RDMA WRITEs to 4 peers in other racks, 4 QPs per
connection (NCCL_IB_QPS_PER_CONNECTION=4), with the fixed UDP source port some RoCE stacks use,
so the 5-tuple carries no entropy between a pair's QPs. Valid BTH and ICRC."""
import os
import struct
import sys
import zlib

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapWriter, wrpcap


def icrc(l3):
    b = bytearray(l3)
    b[1] = 0xFF
    b[8] = 0xFF
    b[10:12] = b"\xff\xff"
    b[26:28] = b"\xff\xff"
    b[32] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def write(src, dst, qp, psn, payload):
    bth = struct.pack("!BBHB3sB3s", 0x0A, 0, 0xFFFF, 0, qp.to_bytes(3, "big"), 0x80,
                      psn.to_bytes(3, "big"))
    reth = struct.pack("!QII", 0x7F0000000000 + psn * len(payload), 0x1234, len(payload))
    l3 = bytes(IP(src=src, dst=dst, tos=3 << 2 | 2, ttl=64, flags="DF") /
               UDP(sport=49152, dport=4791, chksum=0) / Raw(bth + reth + payload + b"\0" * 4))
    return Ether(src="02:00:00:00:10:01", dst="02:00:00:00:01:00") / IP(l3[:-4] + icrc(l3[:-4]))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    payload = bytes(1024)
    for h, src in enumerate(("10.1.0.1", "10.1.0.3")):
        frames = []
        for psn in range(64):
            for peer in range(4):
                for q in range(4):
                    qp = 0x100 * (h + 1) + 0x10 * peer + q
                    frames.append(write(src, f"10.{2 + peer}.0.{1 + 2 * h}", qp, psn, payload))
        wrpcap(os.path.join(outdir, f"h{h}.pcap"), frames)
    with PcapWriter(os.path.join(outdir, "empty.pcap"), linktype=1) as w:
        w.write_header(None)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/demo")
