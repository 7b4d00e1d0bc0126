"""Helpers for the cases' check.py: read what the replay wrote, with scapy and tshark, never with
rocesw itself."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "py"))

import logging  # noqa: E402
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.utils import RawPcapReader  # noqa: E402

OUT, WORK = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else (None, None)


def frames(path):
    """[(t_ns, bytes)] of a nanosecond capture."""
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, d) for d, m in r]
    finally:
        r.close()


def out(*parts):
    return os.path.join(OUT, *parts)


def work(*parts):
    return os.path.join(WORK, *parts)


def tshark(path, fields, display_filter=None, prefs=()):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=|"]
    for p in prefs:
        cmd += ["-o", p]
    if display_filter:
        cmd += ["-Y", display_filter]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [line.split("|") for line in r.stdout.splitlines()]


def summary():
    with open(out("summary.json")) as f:
        return json.load(f)


def events(kind=None):
    with open(out("events.jsonl")) as f:
        ev = [json.loads(line) for line in f]
    return [e for e in ev if kind is None or e["event"] == kind]


def port(s, name, switch=None):
    ports = s["ports"] if switch is None else \
        next(x for x in s["switches"] if x["name"] == switch)["ports"]
    return next(p for p in ports if p["name"] == name)


def wire_ns(length, mbps):
    """REFERENCE §3: a frame occupies max(len, 60) + 24 bytes of wire time (FCS, preamble, gap)."""
    return (max(length, 60) + 24) * 8 * 1000 / mbps


def expect(cond, message):
    if not cond:
        raise AssertionError(message)


def write(path, timed_frames):
    """A nanosecond pcap (magic 0xa1b23c4d) of [(t_ns, frame)], frame a scapy packet or bytes."""
    import struct
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for t, fr in timed_frames:
            raw = bytes(fr)
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(raw), len(raw)) + raw)
    return path


def ecmp_expected(frames, policy, members=4, buckets=1024):
    """Member of each frame computed here (REFERENCE §5, docs/hash.md key order): five_tuple is
    CRC-16/ARC over src, dst, protocol, sport, dport; dest_qp is CRC-16/XMODEM over the 3 bytes of
    the BTH destination QP; a fresh resilient table maps bucket b to member b mod members."""
    from test_ingress import crc16_arc, crc16_xmodem
    out = []
    for raw in frames:
        if policy == "five_tuple":
            key = raw[26:34] + bytes([raw[23]]) + raw[34:38]
            h = crc16_arc(key)
        else:
            h = crc16_xmodem(raw[14 + 20 + 8 + 5:14 + 20 + 8 + 8])
        out.append((h % buckets) % members)
    return out


def ecmp_check(policy, uplinks=("Ethernet8", "Ethernet16", "Ethernet24", "Ethernet32")):
    """Every frame left on the uplink the Python hash predicts. Returns {uplink: set of flows}."""
    sent = [raw for _, raw in frames(work("in.pcap"))]
    want = ecmp_expected(sent, policy, len(uplinks))
    flows = {u: set() for u in uplinks}
    got = {u: [raw for _, raw in frames(out(u + ".pcap"))] for u in uplinks}
    for m, u in enumerate(uplinks):
        exp = [raw[34:] for raw, w in zip(sent, want) if w == m]
        expect([raw[34:] for raw in got[u]] == exp,
               f"{u}: {len(got[u])} frames, Python's {policy} hash predicts {len(exp)}")
        flows[u] = {(raw[26:34], raw[34:36], raw[47:50]) for raw in got[u]}
    return flows
