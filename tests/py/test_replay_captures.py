"""What `rocesw replay` writes as captures: --captures none writes no capture and leaves
summary.json byte-identical, also when a hash policy reads the farthest bytes a UDF may (which
replay alone then writes of a frame, docs/replay.md); --capture-only / --capture-window / --capture-filter /
--capture-every / --capture-snaplen select exactly the files and records a Python model of each
option selects from the full captures (read with scapy); the size printed is the size on disk;
bad values are refused with the reason."""
import glob
import json
import os
import random
import re
import shutil
import struct
import subprocess
import unittest

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader

from common import ROCESW, ROOT, tmpdir

ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")


def records(path):
    """[(t_ns, caplen, wirelen, bytes)] of a nanosecond capture."""
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, len(d), m.wirelen, d) for d, m in r]
    finally:
        r.close()


def pcaps(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**", "*.pcap"),
                                                          recursive=True))


class Captures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.gen = os.path.join(cls.dir, "gen")
        subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "8", "--message", "262144",
                        "--out", cls.gen], check=True, capture_output=True)
        cls.full = os.path.join(cls.dir, "full")
        cls.full_out = cls.replay(cls.full)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def replay(cls, out, *extra, check=True):
        r = subprocess.run([ROCESW, "replay", "--config", ZONE, "--in-dir", cls.gen, "--out", out,
                            *extra], capture_output=True, text=True)
        if check:
            assert r.returncode == 0, r.stderr
            return r.stdout
        return r

    def reported_mb(self, stdout):
        m = re.search(r"captures: (\d+) files, ([\d.]+) MB in ", stdout)
        self.assertIsNotNone(m, stdout)
        return int(m.group(1)), float(m.group(2))

    def test_payload_where_it_lies(self):
        """Whole captures of frames whose payload bytes are random: each record a switch port
        writes is a frame of a host's capture, byte for byte from its UDP header on (the
        switches rewrite only MACs, TTL and checksum), as long on the wire; every frame a switch
        sent is recorded, and each input frame at least once. The same when every frame's
        payload stays in its host's capture rather than in packet memory
        (ROCESW_PAYLOAD_IN_CAPTURE=1; by default only past the first pool, docs/replay.md), and
        cut by a snap length past the headers, the whole records cut."""
        d = os.path.join(self.dir, "payload")
        gen = os.path.join(d, "gen")
        os.makedirs(gen)
        rng = random.Random(4791)
        sent = {}
        for f in os.listdir(self.gen):
            with open(os.path.join(gen, f), "wb") as w:
                w.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
                for t, _, wire, data in records(os.path.join(self.gen, f)):
                    b = bytearray(data)
                    b[100:] = rng.randbytes(len(b) - 100)
                    sent[bytes(b[100:132])] = bytes(b)
                    w.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(b), wire) + b)
        self.assertGreater(min(len(b) for b in sent.values()), 1000, "frames with a payload")
        runs = {"held": ({}, []), "in-capture": ({"ROCESW_PAYLOAD_IN_CAPTURE": "1"}, []),
                "cut": ({"ROCESW_PAYLOAD_IN_CAPTURE": "1"}, ["--capture-snaplen", "1000"])}
        for name, (env, extra) in runs.items():
            out = os.path.join(d, name)
            r = subprocess.run([ROCESW, "replay", "--config", ZONE, "--in-dir", gen, "--out", out,
                                *extra], capture_output=True, text=True,
                               env=dict(os.environ, **env))
            self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(d, "held")
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        switch_tx = sum(p["tx_packets"] for s in summary["switches"] for p in s["ports"])
        for name in ("held", "in-capture"):
            out = os.path.join(d, name)
            recorded, seen = 0, set()
            for f in pcaps(out):
                if "/" not in f:
                    continue  # a host's own capture: what it read, sent as read
                for _, caplen, wire, data in records(os.path.join(out, f)):
                    if data[12:14] == b"\x88\x08":
                        continue  # a PFC frame the switch made
                    recorded += 1
                    want = sent.get(bytes(data[100:132]))
                    self.assertIsNotNone(want, f"{name} {f}: a record no host sent")
                    self.assertEqual((caplen, wire), (len(want), len(want)), f)
                    self.assertEqual(data[34:], want[34:], f"{name} {f}: from the UDP header on")
                    seen.add(bytes(data[100:132]))
            self.assertEqual(recorded, switch_tx, name)
            self.assertEqual(seen, set(sent), name)
        cut = os.path.join(d, "cut")
        self.assertEqual(pcaps(cut), pcaps(out))
        for f in pcaps(out):
            want = [(t, min(1000, w), w, data[:1000])
                    for t, _, w, data in records(os.path.join(out, f))]
            self.assertEqual(records(os.path.join(cut, f)), want, f"{f} cut at 1000")

    def test_port_counters_are_the_captures(self):
        """Every switch port's counters in summary.json are what scapy reads of the captures:
        frames and bytes sent, those of its own capture less the PFC frames it made (counted
        apart); frames and bytes received, those of the capture at the link's other end (the
        run goes to its end on lossless links: nothing is left in flight or lost)."""
        with open(os.path.join(self.full, "summary.json")) as f:
            summary = json.load(f)

        def sent(end, pfc):
            path = os.path.join(self.full, end.replace("|", "/") + ".pcap")
            recs = [r for r in records(path) if pfc or r[3][12:14] != b"\x88\x08"]
            return len(recs), sum(r[2] for r in recs)

        peer = {}
        for link in summary["links"]:
            peer[link["a"]], peer[link["b"]] = link["b"], link["a"]
        checked = 0
        for sw in summary["switches"]:
            for p in sw["ports"]:
                end = f"{sw['name']}|{p['name']}"
                if end not in peer:
                    continue
                self.assertEqual((p["tx_packets"], p["tx_bytes"]), sent(end, False), end)
                self.assertEqual((p["rx_packets"], p["rx_bytes"]), sent(peer[end], True), end)
                checked += 1
        self.assertEqual(checked, 6 * 4, "every cabled port of the zone's 6 switches")

    def test_full_size_reported(self):
        files = pcaps(self.full)
        self.assertEqual(len(files), 8 + 6 * 4, "a capture per host and per switch port")
        n, mb = self.reported_mb(self.full_out)
        self.assertEqual(n, len(files))
        on_disk = sum(os.path.getsize(os.path.join(self.full, f)) for f in files)
        self.assertAlmostEqual(mb, on_disk / 1e6, delta=0.05)

    def test_none_same_summary(self):
        out = os.path.join(self.dir, "none")
        stdout = self.replay(out, "--captures", "none")
        self.assertIn("captures: none written", stdout)
        self.assertEqual(pcaps(out), [])
        with open(os.path.join(out, "summary.json"), "rb") as a, \
                open(os.path.join(self.full, "summary.json"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_none_same_summary_udf_at_its_reach(self):
        """A UDF 255 bytes into L4 (the config's bound), 8 bytes long, over payload bytes made
        random per frame: ECMP spreads each flow by them, and a run without captures, which
        writes only a frame's headers and what a UDF can reach into packet memory, takes the
        same paths, frame for frame, as one that writes every byte; so do runs whose captures
        are cut short of the UDF's reach and past it (--capture-snaplen), each capture holding
        the full run's records cut, their bytes what every byte's run wrote."""
        d = os.path.join(self.dir, "udf")
        gen = os.path.join(d, "gen")
        os.makedirs(gen)
        rng = random.Random(29)
        off = 14 + 20 + 255  # Ethernet, IPv4 without options, then the UDF's offset
        for f in os.listdir(self.gen):
            with open(os.path.join(gen, f), "wb") as w:
                # a nanosecond pcap file, little-endian
                w.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
                for t, _, wire, data in records(os.path.join(self.gen, f)):
                    b = bytearray(data)
                    b[off:off + 8] = rng.randbytes(8)
                    w.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(b), wire) + b)
        policy = os.path.join(d, "far.yaml")
        with open(policy, "w") as f:
            f.write("HASH_POLICY:\n  far:\n    algorithm: CRC\n    udf:\n"
                    "      - {base: L4, offset: 255, length: 8, mask: \"0xffffffffffffffff\"}\n")
        summaries = []
        # cut short of the UDF's reach and past it: packet memory holds the longer of the two
        runs = {"all": [], "none": ["--captures", "none"], "cut100": ["--capture-snaplen", "100"],
                "cut400": ["--capture-snaplen", "400"]}
        for caps, extra in runs.items():
            out = os.path.join(d, caps)
            r = subprocess.run([ROCESW, "replay", "--config", ZONE, "--in-dir", gen, "--out", out,
                                "--hash-policy", policy + ":far", *extra],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "summary.json"), "rb") as f:
                summaries.append(f.read())
        for other in summaries[1:]:
            self.assertEqual(summaries[0], other)
        full = os.path.join(d, "all")
        for n in (100, 400):
            cut = os.path.join(d, f"cut{n}")
            self.assertEqual(pcaps(cut), pcaps(full))
            for f in pcaps(full):
                want = [(t, min(n, w), w, data[:n])
                        for t, _, w, data in records(os.path.join(full, f))]
                self.assertEqual(records(os.path.join(cut, f)), want, f"{f} cut at {n}")
        # the UDF decided: some flow's frames left a switch by more than one port
        s = json.loads(summaries[1])
        spread = 0
        for fl in s["flows"]:
            by_switch = {}
            for hop in fl["path"]:
                if "|" in hop["from"]:
                    by_switch.setdefault(hop["from"].split("|")[0], set()).add(hop["from"])
            spread += any(len(ports) > 1 for ports in by_switch.values())
        self.assertGreater(spread, 0, "the UDF spread no flow: the test would prove nothing")

    def test_selection(self):
        out = os.path.join(self.dir, "sel")
        t0, t1 = 2000, 6000
        stdout = self.replay(out, "--capture-only", "rtsw1|Ethernet26*", "--capture-only", "h1",
                             "--capture-window", f"{t0}:{t1}", "--capture-filter",
                             "udp and (dst host 10.1.0.5 or dst host 10.1.0.3)", "--capture-every", "3",
                             "--capture-snaplen", "100")
        want_files = ["h1.pcap", "rtsw1/Ethernet264.pcap"]
        self.assertEqual(pcaps(out), want_files)
        n, mb = self.reported_mb(stdout)
        self.assertEqual(n, 2)
        total = 0
        for f in want_files:
            full = records(os.path.join(self.full, f))

            def keep(rec):
                t, _, _, data = rec
                e = Ether(data)
                return (t0 <= t < t1 and UDP in e and e[IP].dst in ("10.1.0.5", "10.1.0.3"))
            kept = [r for r in full if keep(r)]
            self.assertGreater(len(kept), 6, f"{f}: the options must leave something to check")
            self.assertLess(len(kept), len(full), f"{f}: and leave something out")
            chosen = kept[::3]
            got = records(os.path.join(out, f))
            self.assertEqual([(t, w) for t, _, w, _ in got], [(t, w) for t, _, w, _ in chosen], f)
            self.assertEqual([d for *_, d in got], [d[:100] for *_, d in chosen], f)
            total += os.path.getsize(os.path.join(out, f))
        self.assertAlmostEqual(mb, total / 1e6, delta=0.05)

    def test_bad_values(self):
        out = os.path.join(self.dir, "bad")
        for args, msg in ((["--captures", "some"], "--captures expects all or none"),
                          (["--capture-window", "500:100"], "TO must be after FROM"),
                          (["--capture-window", "100"], "expects FROM:TO"),
                          (["--capture-snaplen", "10"], "would cut the Ethernet header"),
                          (["--capture-every", "x"], "--capture-every expects a number"),
                          (["--capture-filter", "udp and"], "capture filter 'udp and'")):
            r = self.replay(out, *args, check=False)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(msg, r.stderr, args)


if __name__ == "__main__":
    unittest.main()
