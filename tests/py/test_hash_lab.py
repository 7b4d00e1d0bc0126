"""`rocesw hash` (the hash-policy lab) on generated RoCE traffic: per-member flows, packets and
bytes equal a Python computation of the same CRCs over the key bytes of docs/hash.md and of the
bucket choice (resilient round-robin table, or modulo); a fixed UDP source port puts each host
pair on one member under the 5-tuple, while the destination QP spreads 16 QPs per pair; failing
one of 8 members moves only its flows with the resilient table and more without; bad inputs are
refused with a message."""
import json
import math
import os
import struct
import subprocess
import unittest

import rocepkt
from pages import blocks, open_page
from common import ROCESW, ROOT, tmpdir, write_pcap
from test_ingress import crc16_arc, crc16_xmodem, ip4

POLICIES = os.path.join(ROOT, "tests", "policies", "lab.yaml")
PAIRS = [(f"10.1.0.{2 * i + 1}", f"10.2.0.{2 * i + 1}") for i in range(4)]
QPS = 16


def traffic(sport_of):
    """4 host pairs x 16 QPs, 3 packets per QP of a size that depends on the QP."""
    frames = []
    for src, dst in PAIRS:
        for q in range(QPS):
            qp = 0x400 + 37 * q + int(src.split(".")[-1])
            for psn in range(3):
                frames.append(rocepkt.roce(src=src, dst=dst, dqp=qp, psn=psn,
                                           sport=sport_of(qp), payload=bytes(64 + 8 * q)))
    return frames


def expected(frames, policy, members, buckets, seed=0):
    """Per member [flows, packets, bytes] computed here, independently of the switch."""
    per = [[set(), 0, 0] for _ in range(members)]
    for f in frames:
        raw = bytes(f)
        ip, udp = f.payload, f.payload.payload
        qp = int.from_bytes(raw[14 + 20 + 8 + 5:14 + 20 + 8 + 8], "big")
        if policy == "five_tuple":
            h = crc16_arc(ip4(ip.src) + ip4(ip.dst) + bytes([17]) +
                          struct.pack("!HH", udp.sport, udp.dport), seed)
        else:
            h = crc16_xmodem(qp.to_bytes(3, "big"), seed)
        m = (h % buckets) % members if buckets else h % members
        per[m][0].add((ip.src, ip.dst, udp.sport, qp))
        per[m][1] += 1
        per[m][2] += len(raw)
    return [[len(s), p, b] for s, p, b in per]


def ecmp2_ring():
    """tests/configs/zone-ecmp2 and a ring of its 4 hosts with 8 QPs each: (zone, dir, captures,
    their --pcap arguments)."""
    zone = os.path.join(ROOT, "tests", "configs", "zone-ecmp2", "zone.yaml")
    d = tmpdir()
    subprocess.run([ROCESW, "gen", "--out", d, "--pattern", "ring", "--hosts", "4", "--qps",
                    "8", "--qp-mode", "split", "--message", "262144"], check=True,
                   capture_output=True)
    pcaps = [os.path.join(d, f"h{h}.pcap") for h in range(4)]
    return zone, d, pcaps, [a for p in pcaps for a in ("--pcap", p)]


class HashLab(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.fixed = write_pcap(os.path.join(cls.dir, "fixed.pcap"), traffic(lambda qp: 49152))
        cls.fixed_frames = traffic(lambda qp: 49152)
        cls.linux_frames = traffic(lambda qp: rocepkt.linux_sport(qp, qp))
        cls.linux = write_pcap(os.path.join(cls.dir, "linux.pcap"), cls.linux_frames)

    def lab(self, *args, check=True):
        r = subprocess.run([ROCESW, "hash", "--policy", POLICIES, "--json", *args],
                           capture_output=True, text=True)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
            return {p["name"]: p for p in json.loads(r.stdout)["policies"]}
        return r

    def test_counts_match_python(self):
        for frames, pcap in ((self.fixed_frames, self.fixed), (self.linux_frames, self.linux)):
            for members, buckets in ((8, 4096), (6, 0), (6, 4096)):
                extra = ["--no-resilient"] if not buckets else ["--buckets", str(buckets)]
                got = self.lab("--pcap", pcap, "--members", str(members), *extra)
                for name in ("five_tuple", "dest_qp"):
                    want = expected(frames, name, members, buckets)
                    have = [[m["flows"], m["packets"], m["bytes"]] for m in got[name]["members"]]
                    self.assertEqual(have, want, f"{name}, {members} members, {buckets} buckets")
                    loads = [b for _, _, b in want]
                    mean = sum(loads) / members
                    self.assertAlmostEqual(got[name]["max_mean"], max(loads) / mean, places=6)
                    jain = sum(loads) ** 2 / (members * sum(x * x for x in loads))
                    self.assertAlmostEqual(got[name]["jain"], jain, places=6)

    def test_fixed_port_pins_pairs_qp_spreads(self):
        got = self.lab("--pcap", self.fixed, "--members", "8")
        five = got["five_tuple"]
        # 4 host pairs, each wholly on one member: at most 4 members used, 16 flows each
        used = [m for m in five["members"] if m["flows"]]
        self.assertLessEqual(len(used), 4)
        self.assertTrue(all(m["flows"] % QPS == 0 for m in used))
        # stated bound: with 64 QP flows on 8 members, no member carries more than twice its share
        dqp = got["dest_qp"]
        self.assertLessEqual(max(m["flows"] for m in dqp["members"]), 2 * 64 // 8)
        self.assertLess(dqp["max_mean"], five["max_mean"])

    def test_failure_moves_only_its_flows_when_resilient(self):
        got = self.lab("--pcap", self.linux, "--members", "8", "--fail", "3")
        for name in ("five_tuple", "dest_qp"):
            f = got[name]["fail"]
            self.assertEqual(f["own_flows"], got[name]["members"][3]["flows"])
            self.assertEqual(f["moved_resilient"], f["own_flows"], name)
            self.assertGreater(f["moved_modulo"], f["own_flows"], name)

    def test_failure_counts_long_flows_once(self):
        """Flows of 300 packets (more than a byte counter holds): the flows that must move are
        counted once each, as the Python model of the member choice says."""
        flows = [rocepkt.roce(src=src, dst=dst, dqp=0x800 + 37 * q, psn=0,
                              sport=rocepkt.linux_sport(0x800 + 37 * q, q), payload=bytes(64))
                 for src, dst in PAIRS for q in range(8)]
        frames = flows * 300
        pcap = write_pcap(os.path.join(self.dir, "long.pcap"), frames)
        got = self.lab("--pcap", pcap, "--members", "8", "--fail", "3")
        for name in ("five_tuple", "dest_qp"):
            want = expected(flows, name, 8, 4096)[3][0]
            self.assertGreater(want, 0, "the test needs flows on the failed member")
            self.assertEqual(got[name]["fail"]["own_flows"], want, name)
            self.assertEqual(got[name]["fail"]["moved_resilient"], want, name)

    def test_seed_sweep(self):
        got = self.lab("--pcap", self.linux, "--members", "8", "--seed-sweep", "16")
        for name in ("five_tuple", "dest_qp"):
            ratios = []
            for seed in range(16):
                loads = [b for _, _, b in expected(self.linux_frames, name, 8, 4096, seed)]
                ratios.append(max(loads) / (sum(loads) / 8))
            w = got[name]["seed_sweep"]
            self.assertEqual(w["best_seed"], ratios.index(min(ratios)), name)
            self.assertEqual(w["worst_seed"], ratios.index(max(ratios)), name)
            self.assertAlmostEqual(w["best_max_mean"], min(ratios), places=6)
            self.assertAlmostEqual(w["worst_max_mean"], max(ratios), places=6)

    def test_seed_sweep_says_when_it_cannot_change_anything(self):
        """With 8 members every CRC seed gives the same loads (the Python CRCs here show it:
        one max/mean for all 16 seeds), and the lab says so in text and JSON; with 6 members
        seeds differ (again computed here) and no such note is printed."""
        for members, alike in ((8, True), (6, False)):
            got = self.lab("--pcap", self.linux, "--members", str(members), "--seed-sweep", "16")
            text = subprocess.run([ROCESW, "hash", "--policy", POLICIES, "--pcap", self.linux,
                                   "--members", str(members), "--seed-sweep", "16"],
                                  capture_output=True, text=True, check=True).stdout
            for name in ("five_tuple", "dest_qp"):
                ratios = set()
                for seed in range(16):
                    loads = [b for _, _, b in expected(self.linux_frames, name, members, 4096,
                                                       seed)]
                    ratios.add(round(max(loads) / (sum(loads) / members), 9))
                self.assertEqual(len(ratios) == 1, alike, (name, members, ratios))
                w = got[name]["seed_sweep"]
                self.assertEqual(w["changed_anything"], not alike)
                self.assertEqual("none can" in w.get("note", ""), alike)
            self.assertEqual(text.count("none can: a CRC seed XORs the same constant"),
                             2 if alike else 0, text)

    def test_html_page(self):
        """The page in headless chromium: a bar chart per policy whose bars are the members'
        bytes, every chart on one y scale (the largest bar of all + 5 %), the --fail figures in
        a table and the seed sweep's verdict."""
        page = os.path.join(self.dir, "lab.html")
        got = self.lab("--pcap", self.linux, "--members", "8", "--fail", "3", "--seed-sweep",
                       "4", "--html", page)
        p = open_page(self, page, "hash-lab-group")
        charts = {b["policy"]: b for b in blocks(p["spec"]) if b.get("kind") == "bars"}
        self.assertEqual(set(charts), set(got))
        top = max(m["bytes"] for r in got.values() for m in r["members"])
        for name, b in charts.items():
            c = p["charts"][b["id"]]
            self.assertEqual(c["data"][1], [m["bytes"] for m in got[name]["members"]])
            self.assertEqual(b["categories"], [str(m) for m in range(8)])
            self.assertAlmostEqual(c["y"][1], top * 1.05, delta=top * 1e-9, msg="shared y scale")
            self.assertEqual(c["y"][0], 0)
            self.assertEqual(c["axes"], ["member", "bytes (B)"])
        fail = {r[0]: r[1:] for r in p["tables"]["fail"][1:]}
        for name, r in got.items():
            f = r["fail"]
            self.assertEqual(fail[name][:3], [str(f["own_flows"]), str(f["moved_resilient"]),
                                              str(f["moved_modulo"])])
        sweep = {r[0]: r[3] for r in p["tables"]["seed-sweep"][1:]}
        self.assertTrue(all("none can" in sweep[n] for n in got), sweep)

    def test_explain_one_frame(self):
        n = 5  # a frame in the middle of the capture
        f = self.fixed_frames[n - 1]
        ip, udp = f.payload, f.payload.payload
        qp = int.from_bytes(bytes(f)[14 + 20 + 8 + 5:14 + 20 + 8 + 8], "big")
        r = subprocess.run([ROCESW, "hash", "explain", "--policy", POLICIES, "--pcap", self.fixed,
                            "--frame", str(n), "--members", "8", "--json"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = {p["name"]: p for p in json.loads(r.stdout)["policies"]}
        five = ip4(ip.src) + ip4(ip.dst) + bytes([17]) + struct.pack("!HH", udp.sport, udp.dport)
        self.assertEqual([k["field"] for k in got["five_tuple"]["key"]],
                         ["SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"])
        self.assertEqual(bytes.fromhex("".join(k["bytes"] for k in got["five_tuple"]["key"])), five)
        self.assertEqual(got["five_tuple"]["hash"], crc16_arc(five))
        self.assertEqual(got["five_tuple"]["member"], crc16_arc(five) % 4096 % 8)
        self.assertEqual(bytes.fromhex(got["dest_qp"]["key"][0]["bytes"]), qp.to_bytes(3, "big"))
        self.assertEqual(got["dest_qp"]["hash"], crc16_xmodem(qp.to_bytes(3, "big")))
        self.assertEqual(got["dest_qp"]["bucket"], crc16_xmodem(qp.to_bytes(3, "big")) % 4096)
        r = subprocess.run([ROCESW, "hash", "explain", "--policy", POLICIES, "--pcap", self.fixed,
                            "--frame", "100000"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no such frame", r.stderr)

    def assert_refused(self, fmt, target, path, reasons):
        """Each policy of path is refused for fmt with exit 1, no output and its reason."""
        for name, why in reasons.items():
            r = subprocess.run([ROCESW, "hash", "export", "--format", fmt, "--policy", path,
                                "--name", name], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, name)
            self.assertEqual(r.stdout, "")
            self.assertIn(f"{name} cannot be expressed for {target}: {why}", r.stderr)

    def test_export_sonic(self):
        """The shipped RTSW E-ECMP policy exports as the committed SWITCH_HASH fragment (its QP
        UDF is exactly RDMA_BTH_DEST_QP); what SONiC cannot express is refused with the reason."""
        r = subprocess.run([ROCESW, "hash", "export", "--format", "sonic", "--policy",
                            os.path.join(ROOT, "config", "rtsw.yaml"), "--name", "eecmp_dest_qp"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(ROOT, "tests", "expected", "rtsw-eecmp_dest_qp.sonic.json")) as f:
            self.assertEqual(r.stdout, f.read())
        self.assertIn("UDF0 is the RDMA_BTH_DEST_QP", r.stderr)
        bad = os.path.join(ROOT, "tests", "policies", "inexpressible.yaml")
        reasons = {
            "psn_udf": "UDF0 (L4+17, 3 bytes) has no SONiC native field; SONiC's SWITCH_HASH has no UDF",
            "jenkins": "SONiC's ecmp_hash_algorithm has no JENKINS_LO",
            "seeded": "SWITCH_HASH|GLOBAL has no seed field (seed 7)",
        }
        self.assert_refused("sonic", "SONiC", bad, reasons)

    def test_export_eos(self):
        """The RTSW E-ECMP policy as an Arista SAND profile equals the committed file; its UDF
        (UDP/4791, L4 offset 13, 3 bytes) is UDP payload bytes 13 - 8 .. 13 - 8 + 2 = 5-7 (the
        BTH destination QP, REFERENCE §1); what a profile cannot express is refused with the
        reason."""
        r = subprocess.run([ROCESW, "hash", "export", "--format", "eos", "--policy",
                            os.path.join(ROOT, "config", "rtsw.yaml"), "--name", "eecmp_dest_qp"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(ROOT, "tests", "expected", "rtsw-eecmp_dest_qp.eos.txt")) as f:
            self.assertEqual(r.stdout, f.read())
        lines = [x for x in r.stdout.splitlines() if not x.startswith("!")]
        self.assertEqual([x.strip() for x in lines],
                         ["load-balance policies", "load-balance sand profile eecmp_dest_qp",
                          "fields udp dst-port 4791", "payload bytes 5-7"])
        r = subprocess.run([ROCESW, "hash", "export", "--format", "eos", "--policy",
                            os.path.join(ROOT, "tests", "policies", "inexpressible.yaml"), "--name",
                            "psn_udf", "--profile", "default"], capture_output=True, text=True)
        self.assertIn("load-balance sand profile default\n", r.stdout)
        self.assertIn("payload bytes 9-11\n", r.stdout, "the BTH PSN: L4 offset 17, 3 bytes")
        bad = os.path.join(ROOT, "tests", "policies", "eos-inexpressible.yaml")
        reasons = {
            "no_udf": "it has no UDF",
            "l3_udf": "UDF0 is not on the UDP payload of one destination port",
            "any_port": "UDF0 is not on the UDP payload of one destination port",
            "udp_header": "UDF0 (L4+2, 2 bytes) is outside UDP payload bytes 0-62",
            "past_byte_62": "UDF0 (L4+68, 4 bytes) is outside UDP payload bytes 0-62",
            "partial_mask": "UDF0 masks byte 1 with 0xf0: EOS hashes whole payload bytes",
            "two_ports": "UDF1 matches UDP port 4792, UDF0 port 4791",
        }
        self.assert_refused("eos", "EOS", bad, reasons)

    def test_gen_spec_input(self):
        spec = "--pattern ring --hosts 8 --qps 2 --qp-mode split --message 262144"
        got = self.lab("--gen", spec, "--members", "4")
        d = tmpdir()
        subprocess.run([ROCESW, "gen", "--out", d, *spec.split()], check=True,
                       capture_output=True)
        pcaps = []
        for h in range(8):
            pcaps += ["--pcap", os.path.join(d, f"h{h}.pcap")]
        ref = self.lab(*pcaps, "--members", "4")
        self.assertEqual(got, ref, "--gen is the same traffic as the generated captures")
        self.assertEqual(sum(m["flows"] for m in got["dest_qp"]["members"]), 8 * 2)
        r = self.lab("--gen", "--pattern nope --hosts 4", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--pattern expects ring, tree, all-to-all or incast, got 'nope'", r.stderr)

    def test_zone_two_stages(self):
        """--zone tests/configs/zone-ecmp2: every flow's bytes on the uplink its RTSW's group
        picks (4 members) and on the downlink the CTSW's group for the destination rack picks
        (2 parallel links), both predicted here with the Python CRCs and the fresh resilient table
        (bucket = hash mod 1024, member = bucket mod n); tiers judged over those bytes."""
        from scapy.utils import RawPcapReader
        zone, d, pcaps, args = ecmp2_ring()
        page = os.path.join(d, "zone.html")
        got = self.lab(*args, "--zone", zone, "--html", page)
        for policy in ("five_tuple", "dest_qp"):
            want = {}
            for path in pcaps:
                r = RawPcapReader(path)
                for raw, _ in r:
                    if policy == "five_tuple":
                        h = crc16_arc(raw[26:34] + bytes([raw[23]]) + raw[34:38])
                    else:
                        h = crc16_xmodem(raw[14 + 20 + 8 + 5:14 + 20 + 8 + 8])
                    src_rack, dst_rack = (raw[29] // 2) % 2, (raw[33] // 2) % 2
                    m1 = (h % 1024) % 4
                    up = f"rtsw{src_rack + 1}|Ethernet{256 + 8 * m1}"
                    down = f"ctsw{m1 // 2 + 1}|Ethernet{8 * (dst_rack * 2 + (h % 1024) % 2)}"
                    for link in (up, down):
                        want[link] = want.get(link, 0) + len(raw)
                r.close()
            links = {x["from"]: x["bytes"] for x in got[policy]["links"] if x["tier"] != "host"}
            self.assertEqual({k: v for k, v in links.items() if v}, want, policy)
            self.assertEqual(got[policy]["flows"]["delivered"], 4 * 8)
            for tier, prefix in (("up", "rtsw"), ("down", "ctsw")):
                loads = [v for k, v in links.items() if k.startswith(prefix)]
                self.assertEqual(len(loads), 8)
                mean = sum(loads) / len(loads)
                t = got[policy]["tiers"][tier]
                self.assertAlmostEqual(t["max_mean"], max(loads) / mean, places=9)
                self.assertAlmostEqual(t["jain"], sum(loads) ** 2 / (8 * sum(x * x for x in loads)),
                                       places=9)
        # the page: per policy and tier a bar per link, labelled with the link, its bytes those
        # of the JSON, every chart on one y scale
        p = open_page(self, page, "hash-lab-zone")
        bars = [b for b in blocks(p["spec"]) if b.get("kind") == "bars"]
        self.assertEqual([(b["policy"], b["tier"]) for b in bars],
                         [(n, t) for n in ("five_tuple", "dest_qp") for t in ("up", "down")])
        top = max(x["bytes"] for n in ("five_tuple", "dest_qp") for x in got[n]["links"]
                  if x["tier"] in ("up", "down"))
        for b in bars:
            want = [(x["from"], x["bytes"]) for x in got[b["policy"]]["links"]
                    if x["tier"] == b["tier"]]
            c = p["charts"][b["id"]]
            self.assertEqual(list(zip(b["categories"], c["data"][1])), want)
            self.assertAlmostEqual(c["y"][1], top * 1.05, delta=top * 1e-9, msg="shared y scale")
        r = self.lab(*args, "--zone", zone, "--members", "4", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--zone takes ECMP groups and seeds from the zone's switch configs", r.stderr)

    def test_zone_text_summary(self):
        """--zone in text: per policy a tier table (links, idle, max/mean, Jain, stddev/mean,
        the most and least loaded link) and the 10 most loaded links, each against --json's
        links recomputed here; no line lists every link."""
        zone, _, _, args = ecmp2_ring()
        want = self.lab(*args, "--zone", zone)
        r = subprocess.run([ROCESW, "hash", "--policy", POLICIES, *args, "--zone", zone],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("bytes per link", r.stdout)
        for name, p in want.items():
            part = r.stdout.split(f"policy {name}\n")[1].split("\npolicy ")[0]
            lines = part.splitlines()
            links = [x for x in p["links"] if x["tier"] in ("up", "down")]
            for row in lines[2:]:
                if not row.strip():
                    break
                cells = row.split()
                tier = [x for x in links if x["tier"] == cells[0]]
                b = [x["bytes"] for x in tier]
                mean = sum(b) / len(b)
                sd = math.sqrt(sum((v - mean) ** 2 for v in b) / len(b))
                self.assertEqual(int(cells[1]), len(tier))
                self.assertEqual(int(cells[2]), b.count(0))
                self.assertEqual(cells[3], f"{max(b) / mean:.2f}")
                self.assertEqual(cells[5], f"{sd / mean:.3f}")
                self.assertAlmostEqual(p["tiers"][cells[0]]["stddev_bytes"], sd, places=3)
                most = next(x for x in tier if x["bytes"] == max(b))
                least = next(x for x in tier if x["bytes"] == min(b))
                self.assertEqual(cells[-4:], [most["from"], f"{most['bytes'] / 1e6:.3f}",
                                              least["from"], f"{least['bytes'] / 1e6:.3f}"])
            top = sorted(range(len(links)), key=lambda i: (-links[i]["bytes"], i))[:10]
            start = next(i for i, line in enumerate(lines) if line.startswith("most loaded links"))
            rows = [line.split() for line in lines[start + 3:start + 3 + len(top)]]
            self.assertEqual(rows, [[links[i]["from"], links[i]["tier"],
                                     f"{links[i]['bytes'] / 1e6:.3f}", str(links[i]["flows"]),
                                     str(links[i]["packets"])] for i in top])

    def test_zone_switch_hash(self):
        """--switch-hash gives the CTSW stage its own offset, seed or policy; each link's bytes
        equal a Python prediction of both stages (as test_zone_two_stages), the CTSW's hash
        being CRC(key, init = its seed) >> its offset over its own policy's key. With the RTSW's
        policy and seed the down tier repeats the up tier (max/mean equal, polarization); the
        seed alone leaves it so (a CRC seed XORs a constant: the parallel link stays a function
        of the up choice), the offset breaks it on this traffic."""
        from scapy.utils import RawPcapReader
        zone, d, pcaps, args = ecmp2_ring()

        def h_of(raw, policy, seed=0):
            if policy == "five_tuple":
                return crc16_arc(raw[26:34] + bytes([raw[23]]) + raw[34:38], seed)
            return crc16_xmodem(raw[14 + 20 + 8 + 5:14 + 20 + 8 + 8], seed)

        def predict(policy, ct_policy, ct_seed, ct_offset):
            want = {}
            for path in pcaps:
                r = RawPcapReader(path)
                for raw, _ in r:
                    src_rack, dst_rack = (raw[29] // 2) % 2, (raw[33] // 2) % 2
                    m1 = (h_of(raw, policy) % 1024) % 4
                    h2 = h_of(raw, ct_policy, ct_seed) >> ct_offset
                    up = f"rtsw{src_rack + 1}|Ethernet{256 + 8 * m1}"
                    down = f"ctsw{m1 // 2 + 1}|Ethernet{8 * (dst_rack * 2 + (h2 % 1024) % 2)}"
                    for link in (up, down):
                        want[link] = want.get(link, 0) + len(raw)
                r.close()
            return want

        cases = [(["ctsw*:offset=3"], "dest_qp", 0, 3), (["ctsw*:seed=5"], "dest_qp", 5, 0),
                 (["ctsw*:policy=five_tuple"], "five_tuple", 0, 0),
                 (["rtsw*:offset=0", "ctsw*:seed=5,offset=3"], "dest_qp", 5, 3)]
        base = self.lab(*args, "--zone", zone)["dest_qp"]
        self.assertAlmostEqual(base["tiers"]["up"]["max_mean"], base["tiers"]["down"]["max_mean"])
        for rules, ct_policy, ct_seed, ct_offset in cases:
            rule_args = [a for r in rules for a in ("--switch-hash", r)]
            got = self.lab(*args, "--zone", zone, *rule_args)["dest_qp"]
            links = {x["from"]: x["bytes"] for x in got["links"] if x["tier"] != "host"}
            self.assertEqual({k: v for k, v in links.items() if v},
                             predict("dest_qp", ct_policy, ct_seed, ct_offset), rules)
            t = got["tiers"]
            if rules == ["ctsw*:seed=5"]:
                self.assertAlmostEqual(t["up"]["max_mean"], t["down"]["max_mean"], msg=rules)
            if rules == ["ctsw*:offset=3"]:
                self.assertNotAlmostEqual(t["up"]["max_mean"], t["down"]["max_mean"], msg=rules)
        for bad, msg in ((["ctsw*:offset=16"], "offset is 0 to 15"),
                         (["ctsw*:policy=nope"], "no policy nope"),
                         (["ctsw*"], "expected GLOB:")):
            r = self.lab(*args, "--zone", zone, "--switch-hash", bad[0], check=False)
            self.assertEqual(r.returncode, 2)
            self.assertIn(msg, r.stderr)
        r = self.lab(*args, "--switch-hash", "ctsw*:seed=1", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--switch-hash needs --zone", r.stderr)

    def test_bad_inputs(self):
        cut = os.path.join(self.dir, "cut.pcap")
        with open(self.fixed, "rb") as src, open(cut, "wb") as dst:
            dst.write(src.read()[:-20])
        r = self.lab("--pcap", cut, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cut.pcap: truncated", r.stderr)
        r = subprocess.run([ROCESW, "hash", "--policy", os.path.join(ROOT, "nope.yaml"),
                            "--pcap", self.fixed], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nope.yaml", r.stderr)
        r = self.lab("--pcap", self.fixed, "--members", "4", "--fail", "5", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--fail 5: there are only 4 members", r.stderr)
        r = self.lab("--pcap", self.fixed, "--members", "many", check=False)
        self.assertIn("--members expects a number, got 'many'", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
