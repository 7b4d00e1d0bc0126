"""RoCEv2 test packets built from REFERENCE.md §1, independently of the switch's C code.

Extended-header layouts per opcode are written out here from the reference (Linux rxe_opcode.c),
and the ICRC is computed here with zlib from the formula in the reference, so a test that
compares the switch's reading with these packets checks the C code against the spec.
"""
import struct
import zlib

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

ROCE_PORT = 4791

# Extended headers, in wire order, with their lengths (REFERENCE §1).
RDETH, DETH, FETH, RETH, ATOMICETH, AETH, ATOMICACKETH, IMMDT, IETH = (
    ("rdeth", 4), ("deth", 8), ("feth", 4), ("reth", 16), ("atomiceth", 28), ("aeth", 4),
    ("atomicacketh", 8), ("immdt", 4), ("ieth", 4))

# Operation (low 5 bits) → extended headers, for RC/UC/UD (RD adds RDETH and, on requests, DETH).
_OPS = {
    0x00: [], 0x01: [], 0x02: [], 0x03: [IMMDT], 0x04: [], 0x05: [IMMDT],
    0x06: [RETH], 0x07: [], 0x08: [], 0x09: [IMMDT], 0x0A: [RETH], 0x0B: [RETH, IMMDT],
    0x0C: [RETH], 0x0D: [AETH], 0x0E: [], 0x0F: [AETH], 0x10: [AETH], 0x11: [AETH],
    0x12: [AETH, ATOMICACKETH], 0x13: [ATOMICETH], 0x14: [ATOMICETH],
    0x16: [IETH], 0x17: [IETH], 0x1C: [FETH, RETH], 0x1D: [RETH],
}
_RD_RESPONSES = {0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12}


def opcode_headers():
    """Every defined opcode → its list of (name, length) extended headers."""
    table = {}
    for op, hdrs in _OPS.items():
        table[0x00 | op] = hdrs                      # RC: all
        if op <= 0x0B:
            table[0x20 | op] = hdrs                  # UC: SEND and RDMA WRITE
        if op <= 0x14:
            table[0x40 | op] = [RDETH] + ([] if op in _RD_RESPONSES else [DETH]) + hdrs
    table[0x64] = [DETH]                             # UD SEND only
    table[0x65] = [DETH, IMMDT]                      # UD SEND only with immediate
    table[0x81] = [("cnp", 16)]                      # CNP: 16 reserved bytes
    return table


OPCODES = opcode_headers()
RESERVED_OPCODES = [op for op in range(256) if op not in OPCODES]


def bth(opcode, dqp, psn, pad=0, becn=False, fecn=False, ackreq=False, pkey=0xFFFF, se=False):
    b1 = (0x80 if se else 0) | (pad << 4)
    b4 = (0x80 if fecn else 0) | (0x40 if becn else 0)
    return struct.pack("!BBHB3sB3s", opcode, b1, pkey, b4, dqp.to_bytes(3, "big"),
                       0x80 if ackreq else 0, psn.to_bytes(3, "big"))


def ext_bytes(opcode):
    """Extended headers filled with a recognisable byte pattern."""
    out = b""
    for i, (_, n) in enumerate(OPCODES.get(opcode, [])):
        out += bytes(((0x11 * (i + 1) + k) & 0xFF) for k in range(n)) if opcode != 0x81 else bytes(n)
    return out


def icrc(l3_bytes):
    """ICRC of an IP packet whose last 4 bytes are the ICRC placeholder (REFERENCE §1)."""
    b = bytearray(l3_bytes[:-4])
    if b[0] >> 4 == 4:
        ihl = (b[0] & 0x0F) * 4
        b[1] = 0xFF
        b[8] = 0xFF
        b[10:12] = b"\xff\xff"
        udp = ihl
    else:
        b[0] |= 0x0F
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xFF
        udp = 40  # tests put no extension header before a RoCE UDP header
    b[udp + 6:udp + 8] = b"\xff\xff"
    b[udp + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def roce(opcode=0x0A, dqp=0x12, psn=0, payload=b"\x00" * 64, src="10.1.0.1", dst="10.2.0.1",
         sport=49152, dscp=3, ecn=2, ttl=64, vlans=(), ipv6=False, smac="02:00:00:00:10:01",
         dmac="02:00:00:00:01:00", becn=False, pad=0, flow_label=0, good_icrc=True):
    """A whole RoCEv2 frame with a correct ICRC (unless good_icrc is False)."""
    body = bth(opcode, dqp, psn, pad=pad, becn=becn) + ext_bytes(opcode) + payload + b"\0" * 4
    if ipv6:
        l3 = IPv6(src=src, dst=dst, tc=(dscp << 2) | ecn, hlim=ttl, fl=flow_label)
    else:
        l3 = IP(src=src, dst=dst, tos=(dscp << 2) | ecn, ttl=ttl, flags="DF")
    pkt = l3 / UDP(sport=sport, dport=ROCE_PORT, chksum=0) / Raw(body)
    raw = bytes(pkt)
    crc = icrc(raw) if good_icrc else b"\xde\xad\xbe\xef"
    l2 = Ether(src=smac, dst=dmac)
    for pcp, vid in vlans:
        l2 = l2 / Dot1Q(prio=pcp, vlan=vid)
    return l2 / (IPv6 if ipv6 else IP)(raw[:-4] + crc)


def linux_sport(lqpn, rqpn):
    """UDP source port Linux derives from the QP numbers (REFERENCE §1)."""
    v = lqpn * rqpn
    v ^= v >> 20
    v ^= v >> 40
    fl = v & 0xFFFFF
    return ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000
