"""`rocesw replay` of zone configs: the shipped two-stage zone delivers a ring AllReduce whole
and byte-identically twice; a frame's hop over a link takes its serialization plus 5 ns/m
(REFERENCE §2); hosts honour PFC unless --hosts-ignore-pfc; report.html is self-contained and
draws what the summary says; broken zone configs, captures and options are refused with the
reason."""
import filecmp
import json
import math
import os
import shutil
import subprocess
import unittest

from scapy.utils import RawPcapReader

from pages import blocks, check_replay_page, open_page
from common import ROCESW, ROOT, tmpdir

ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")
TWO_HOP = os.path.join(ROOT, "pcap-tests", "09-pfc-two-hop-spreading")


def read(path):
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, d) for d, m in r]
    finally:
        r.close()


def replay(*args):
    return subprocess.run([ROCESW, "replay", *args], capture_output=True, text=True)


class Zone(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.ring = os.path.join(cls.dir, "gen-ring")
        subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "8", "--message", "262144",
                        "--qps", "2", "--qp-mode", "split", "--out", cls.ring], check=True,
                       capture_output=True)
        cls.incast = os.path.join(cls.dir, "gen-incast")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--message", "262144", "--speed", "100000", "--out", cls.incast],
                       check=True, capture_output=True)

    def run_zone(self, name, *extra, config=ZONE, indir=None):
        out = os.path.join(self.dir, name)
        r = replay("--config", config, "--in-dir", indir or self.ring, "--out", out, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return out, json.load(f)

    def test_ring_delivered_and_deterministic(self):
        out, s = self.run_zone("ring")
        hosts = {h["name"]: h for h in s["hosts"]}
        for i in range(8):
            sent = read(os.path.join(self.ring, f"h{i}.pcap"))
            self.assertEqual(hosts[f"h{i}"]["tx_packets"], len(sent))
            # in a ring every host receives what its predecessor sent
            prev = read(os.path.join(self.ring, f"h{(i - 1) % 8}.pcap"))
            self.assertEqual(hosts[f"h{i}"]["rx_packets"], len(prev))
        self.assertEqual(s["drops"], {})
        c = s["conservation"]
        self.assertTrue(c["holds"])
        self.assertEqual(c["delivered"], c["entered"] + c["generated"])
        self.assertTrue(all(sw["conservation"]["holds"] for sw in s["switches"]))
        # every ring hop crosses the CTSW stage: rack r's uplinks carry exactly its hosts' bytes
        for sw in s["switches"]:
            if sw["name"].startswith("rtsw"):
                up = sum(p["tx_bytes"] for p in sw["ports"] if int(p["name"][8:]) >= 256)
                down = sum(p["rx_bytes"] for p in sw["ports"] if int(p["name"][8:]) < 256)
                self.assertEqual(up, down, sw["name"])
        # each flow's path in summary.json is where its frames were captured: on every port
        # (and host) that sent frames, the flows and their frame counts read from the capture
        # (IPv4 addresses, UDP ports, BTH destination QP) are those whose path leaves there
        def key(raw):
            return (".".join(map(str, raw[26:30])), ".".join(map(str, raw[30:34])),
                    int.from_bytes(raw[34:36], "big"), int.from_bytes(raw[36:38], "big"),
                    int.from_bytes(raw[47:50], "big"))
        by_path = {}
        for f in s["flows"]:
            k = (f["src"], f["dst"], f["sport"], f["dport"], f["dest_qp"])
            for hop in f["path"]:
                by_path.setdefault(hop["from"], {})[k] = hop["packets"]
        captures = {}
        for name in os.listdir(out):
            if name.endswith(".pcap"):
                captures[name[:-5]] = os.path.join(out, name)
            elif os.path.isdir(os.path.join(out, name)):
                for p in os.listdir(os.path.join(out, name)):
                    captures[f"{name}|{p[:-5]}"] = os.path.join(out, name, p)
        self.assertEqual(len(captures), 8 + 8 + 8 + 8, "8 hosts, 8 host ports, 8 up-, 8 downlinks")
        self.assertLessEqual(by_path.keys(), captures.keys())
        for sender, pcap in captures.items():
            seen = {}
            for _, raw in read(pcap):
                if raw[12:14] == b"\x08\x00":  # IPv4: PFC frames belong to no flow
                    seen[key(raw)] = seen.get(key(raw), 0) + 1
            self.assertEqual(seen, by_path.get(sender, {}), sender)
        got = open_page(self, os.path.join(out, "report.html"), "replay-zone-ring")
        check_replay_page(self, got, out)
        self.assertIn("flow-collisions", {b.get("id") for b in blocks(got["spec"])})
        out2, _ = self.run_zone("ring-again")
        cmp = filecmp.dircmp(out, out2)
        self.assertEqual((cmp.left_only, cmp.right_only, cmp.diff_files), ([], [], []))
        for sub in cmp.common_dirs:
            c2 = filecmp.dircmp(os.path.join(out, sub), os.path.join(out2, sub))
            self.assertEqual(c2.diff_files, [], sub)
            for f in c2.common_files:
                self.assertTrue(filecmp.cmp(os.path.join(out, sub, f), os.path.join(out2, sub, f),
                                            shallow=False), f)

    def test_link_delay(self):
        """h0's first frame: leaves h0 at t, is whole at rtsw1 after (len + 4 + 8) x 8 bits at
        400G plus 3 m x 5 ns/m, leaves the idle uplink at once, and is whole at the CTSW after
        its serialization plus 40 m x 5 ns/m."""
        out, _ = self.run_zone("delay")
        t0, f0 = read(os.path.join(out, "h0.pcap"))[0]
        ser = math.ceil((len(f0) + 12) * 8 / 400)
        ups = [(t, raw) for p in ("Ethernet256", "Ethernet264")
               for t, raw in read(os.path.join(out, "rtsw1", p + ".pcap"))]
        first = min(t for t, raw in ups if raw[26:30] == f0[26:30])
        self.assertEqual(first, t0 + ser + 15)
        ctsw = [t for c in ("ctsw1", "ctsw2") for p in ("Ethernet8",)
                for t, raw in read(os.path.join(out, c, p + ".pcap")) if raw[26:30] == f0[26:30]]
        self.assertEqual(min(ctsw), first + ser + 200)

    def test_hosts_honour_pfc_unless_told(self):
        cfg = os.path.join(TWO_HOP, "zone.yaml")
        out, s = self.run_zone("honour", config=cfg, indir=self.incast)
        h0 = {h["name"]: h for h in s["hosts"]}["h0"]
        self.assertGreater(h0["delayed_packets"], 0)
        self.assertGreater(h0["pfc_rx_frames"], 0)
        sent = read(os.path.join(self.incast, "h0.pcap"))
        left = read(os.path.join(out, "h0.pcap"))
        self.assertEqual([raw for _, raw in left], [raw for _, raw in sent])
        self.assertTrue(all(a >= b for (a, _), (b, _) in zip(left, sent)))
        out, s = self.run_zone("ignore", "--hosts-ignore-pfc", config=cfg, indir=self.incast)
        left = read(os.path.join(out, "h0.pcap"))
        self.assertEqual(left, sent, "as captured")
        self.assertEqual({h["name"]: h for h in s["hosts"]}["h0"]["delayed_packets"], 0)

    def test_report(self):
        """report.html in headless chromium: no console error, nothing fetched, and every chart's
        plotted values recomputed from summary.json and events.jsonl (tests/py/pages.py)."""
        out, s = self.run_zone("report", config=os.path.join(TWO_HOP, "zone.yaml"),
                               indir=self.incast)
        got = open_page(self, os.path.join(out, "report.html"), "replay-zone-incast")
        check_replay_page(self, got, out)
        self.assertEqual(len(got["topology"]), len(s["links"]), "a line per link drawn")
        self.assertTrue(any(r["spans"] for b in blocks(got["spec"]) if b.get("kind") == "timeline"
                            for r in b["rows"]), "XOFF spans drawn")
        self.assertTrue(any(x["pfc"] > 0 for x in got["topology"]), "PFC drawn on a link")
        axes = got["charts"]["queue-depth"]["axes"]
        self.assertEqual(axes, ["virtual time (µs)", "queue depth (B)"], "axes with units")

    def test_check_config(self):
        """check-config loads the shipped zone: its switches, hosts and links as PyYAML counts
        them, and every switch config on its own."""
        import yaml
        with open(ZONE) as f:
            z = yaml.safe_load(f)
        r = subprocess.run([ROCESW, "check-config", ZONE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"ok: zone zone-2stage: {len(z['SWITCH'])} switches, {len(z['HOST'])} "
                      f"hosts, {len(z['LINK'])} links", r.stdout)
        self.assertEqual(r.stderr, "", "lengths agree with CABLE_LENGTH: no warning")
        for name, sw in z["SWITCH"].items():
            path = os.path.join(os.path.dirname(ZONE), sw["config"])
            r = subprocess.run([ROCESW, "check-config", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                c = yaml.safe_load(f)
            self.assertIn(f"ok: {len(c['PORT'])} ports", r.stdout)

    def test_bad_zone_configs(self):
        d = tmpdir()
        for f in ("sw1.yaml", "sw2.yaml"):
            shutil.copy(os.path.join(TWO_HOP, f), d)
        with open(os.path.join(TWO_HOP, "zone.yaml")) as f:
            good = f.read()
        cases = [
            (good.replace("ZONE:", "ZONES:"), "unknown table in a zone config"),
            (good.replace('"sw1|Ethernet16"', '"sw1|Ethernet99"'), "neither a host nor SWITCH|PORT"),
            (good.replace("length: 40m}", "length: 40m, speed: 400000}"), "runs at 100000 Mb/s"),
            (good.replace('b: "sw1|Ethernet8"', 'b: "sw1|Ethernet0"'), "already linked"),
            (good.replace('  - {a: "sw2|Ethernet8", b: h2, length: 3m}\n', ""), "host h2 has no link"),
            # both ends taken, by different links: the one the earliest link took is named
            (good.replace('  - {a: "sw2|Ethernet8", b: h2, length: 3m}\n',
                          '  - {a: "sw2|Ethernet8", b: h2, length: 3m}\n'
                          '  - {a: "sw1|Ethernet8", b: h0, length: 3m}\n'), "h0 is already linked"),
            (good.replace("  h1: {}", "  h1: {}\n  h1: {}"), "name 'h1' is already used"),
            (good.replace("  h1: {}", "  h1: {}\n  sw2: {}"), "name 'sw2' is already used"),
            (good.replace("config: sw2.yaml", "config: nowhere.yaml"), "sw2: "),
            (good.replace("length: 3m}", "length: 3km}", 1), "expected metres"),
            (good.replace("  h1: {}", "  h1: {nic: x}"), "unknown field 'nic'"),
        ]
        for i, (text, msg) in enumerate(cases):
            path = os.path.join(d, f"z{i}.yaml")
            with open(path, "w") as f:
                f.write(text)
            r = replay("--config", path, "--out", os.path.join(d, "o"), "--in-dir", self.incast)
            self.assertEqual(r.returncode, 1, (msg, r.stderr))
            self.assertIn(msg, r.stderr)
            self.assertIn(path, r.stderr)

    def test_bad_inputs(self):
        d = tmpdir()
        cfg = os.path.join(TWO_HOP, "zone.yaml")
        r = replay("--config", cfg, "--out", d, "--in", "h9=/dev/null")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no host or SWITCH|PORT named 'h9'", r.stderr)
        r = replay("--config", cfg, "--out", d)
        self.assertEqual(r.returncode, 2)
        self.assertIn("nothing to replay", r.stderr)
        r = replay("--config", cfg, "--out", d, "--in-dir", self.incast, "--hash-policy",
                   os.path.join(ROOT, "config", "hash-policies.yaml:nope"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no policy named 'nope'; it has: five_tuple dest_qp eecmp", r.stderr)
        # inputs inside the output directory would be overwritten
        r = replay("--config", cfg, "--out", self.dir, "--in-dir", self.incast)
        self.assertEqual(r.returncode, 2)
        self.assertIn("whose files replay overwrites", r.stderr)
        # a capture cut in the middle of a record: the run fails naming the file
        with open(os.path.join(self.incast, "h0.pcap"), "rb") as f:
            data = f.read()
        cut = os.path.join(d, "cut.pcap")
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 2 + 7])
        r = replay("--config", cfg, "--out", os.path.join(d, "o"), "--in", f"h0={cut}")
        self.assertEqual(r.returncode, 1)
        self.assertIn(cut, r.stderr)
        self.assertIn("truncated", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
