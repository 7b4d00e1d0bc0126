"""Closed-loop hosts (`rocesw replay --collective`): an uncongested ring AllReduce takes the analytic
2(N-1) steps of a chunk's wire time plus the per-step latency of docs/replay.md; a dropped frame is
recovered by go-back-N after exactly the retransmission timeout (NAK off) or one round trip (NAK),
the lost PSN range resent once and every PSN accepted in order (read from the captures); CTS
admission bounds the bottleneck queue by window x chunk x senders; frames are valid RoCEv2 (ICRC
checked independently); runs are byte-identical; bad specs are refused with the reason."""
import filecmp
import json
import re
import math
import os
import struct
import subprocess
import unittest

import yaml

from scapy.utils import RawPcapReader

import rocepkt
import ring_bound
from common import ROCESW, ROOT, tmpdir
from ring_bound import WIRE_EXTRA, data_frame_len

ZONE2 = os.path.join(ROOT, "config", "zone-2stage.yaml")

# Two switches joined by two links; h0 on sw1, h1 on sw2. Each spreads traffic to the far host
# over both links by ECMP; on sw1 a POLICY_ROUTE pins what enters from h0 to the first link.
def pin_switch(n, fallback=True):
    me, far = (1, 2) if n == 1 else (2, 1)
    host_ip, far_ip = (f"10.1.0.{2 * me - 1}", f"10.1.0.{2 * far - 1}")
    peer = [f"10.254.0.{1 - (n - 1) + 2 * k}" for k in range(2)]  # sw1 sees .1/.3, sw2 .0/.2
    pin = "" if n == 2 else (f'POLICY_ROUTE:\n  "Ethernet0|{far_ip}/32": {{nexthop: "{peer[0]}"'
                             + ("" if fallback else ", fallback: false") + "}\n")
    return f"""
DEVICE_METADATA:
  localhost: {{hostname: sw{n}, mac: "02:00:00:00:01:00"}}
PORT:
  Ethernet0: {{speed: 100000, role: host, mtu: 9100}}
  Ethernet8: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:08"}}
  Ethernet16: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:10"}}
NEIGH:
  "Ethernet0|{host_ip}": {{neigh: "02:00:00:01:00:0{me - 1}"}}
  "Ethernet8|{peer[0]}": {{neigh: "02:00:00:00:{far}1:08"}}
  "Ethernet16|{peer[1]}": {{neigh: "02:00:00:00:{far}1:10"}}
NEXTHOP_GROUP:
  up: {{nexthop: "{peer[0]},{peer[1]}", buckets: 256, resilient: true}}
STATIC_ROUTE:
  "{host_ip}/32": {{nexthop: "{host_ip}"}}
  "{far_ip}/32": {{nexthop_group: up}}
{pin}"""


PIN_ZONE = """
SWITCH:
  sw1: {config: sw1.yaml}
  sw2: {config: sw2.yaml}
HOST:
  h0: {}
  h1: {}
LINK:
  - {a: h0, b: "sw1|Ethernet0", length: 3m}
  - {a: h1, b: "sw2|Ethernet0", length: 3m}
  - {a: "sw1|Ethernet8", b: "sw2|Ethernet8", length: 3m}
  - {a: "sw1|Ethernet16", b: "sw2|Ethernet16", length: 3m}
"""

SPEED = 100000  # Mb/s
CABLE_M = 3
PROP_NS = 5 * CABLE_M
MTU = 4096
IFG = 12


def switch_yaml(n):
    ports = "\n".join(f"  Ethernet{8 * i}: {{speed: {SPEED}, role: host, mtu: 9100}}"
                      for i in range(n))
    neigh = "\n".join(f'  "Ethernet{8 * i}|10.1.0.{2 * i + 1}": {{neigh: "02:00:00:01:00:{i:02x}"}}'
                      for i in range(n))
    routes = "\n".join(f'  "10.1.0.{2 * i + 1}/32": {{nexthop: "10.1.0.{2 * i + 1}"}}'
                       for i in range(n))
    return (f'DEVICE_METADATA:\n  localhost: {{hostname: sw, mac: "02:00:00:00:01:00"}}\n'
            f"PORT:\n{ports}\nNEIGH:\n{neigh}\nSTATIC_ROUTE:\n{routes}\n")


def zone_yaml(n):
    hosts = "\n".join(f"  h{i}: {{}}" for i in range(n))
    links = "\n".join(f'  - {{a: h{i}, b: "sw|Ethernet{8 * i}", length: {CABLE_M}m}}'
                      for i in range(n))
    return f"SWITCH:\n  sw: {{config: sw.yaml}}\nHOST:\n{hosts}\nLINK:\n{links}\n"


def read(path):
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, bytes(d)) for d, m in r]
    finally:
        r.close()


def bth(raw):
    """(opcode, dest QP, PSN, ackreq) of a RoCEv2 frame, or None."""
    if len(raw) < 54 or raw[12:14] != b"\x08\x00" or raw[23] != 17:
        return None
    if struct.unpack(">H", raw[36:38])[0] != 4791:
        return None
    b = raw[42:54]
    return b[0], int.from_bytes(b[5:8], "big"), int.from_bytes(b[9:12], "big"), bool(b[8] & 0x80)


def wire_ns(length):
    return ring_bound.wire_ns(length, SPEED)


class Loop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()

    def zone(self, n):
        d = os.path.join(self.dir, f"zone{n}")
        if not os.path.isdir(d):
            os.makedirs(d)
            with open(os.path.join(d, "sw.yaml"), "w") as f:
                f.write(switch_yaml(n))
            with open(os.path.join(d, "zone.yaml"), "w") as f:
                f.write(zone_yaml(n))
        return os.path.join(d, "zone.yaml")

    def run_coll(self, name, n, spec, config=None, ok=True):
        out = os.path.join(self.dir, name)
        # these tests read whole frames (payload lengths, ICRCs): not the collective's default
        r = subprocess.run([ROCESW, "replay", "--config", config or self.zone(n), "--collective",
                            spec, "--capture-snaplen", "0", "--out", out], capture_output=True,
                           text=True)
        if not ok:
            return r
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return out, json.load(f), r.stdout

    def test_default_dscp_is_the_shipped_lossless_class(self):
        """Hosts send what the shipped zone's switches treat as RoCE: the DSCP of every data
        frame and ACK, read from the hosts' captures, maps (the RTSWs' DSCP_TO_TC_MAP, SONiC's
        AZURE of REFERENCE.md §4 when they have none: 3→3, 4→4, 5→2, 8→0, 46→5, 48→6, the
        rest → 1) to a TC every RTSW port has in pfc_enable; the RTSWs queue it on that
        queue."""
        azure = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}
        out, s, _ = self.run_coll("dscp", 8, "ring,size=256K", config=ZONE2)
        self.assertTrue(s["collective"]["complete"])
        dscps = set()
        for h in range(8):
            dscps |= {raw[15] >> 2 for _, raw in read(os.path.join(out, f"h{h}.pcap"))
                      if bth(raw) and bth(raw)[0] in (6, 7, 8, 10, 0x11)}
        self.assertEqual(len(dscps), 1, dscps)
        dscp = dscps.pop()
        tcs = set()
        for n in range(1, 5):
            with open(os.path.join(ROOT, "config", "zone-2stage", f"rtsw{n}.yaml")) as f:
                cfg = yaml.safe_load(f)
            maps = cfg.get("DSCP_TO_TC_MAP", {}).get("AZURE")
            tc = int(maps[str(dscp)]) if maps else azure.get(dscp, 1)
            tcs.add(tc)
            for port, q in cfg["PORT_QOS_MAP"].items():
                pfc = {int(x) for x in str(q["pfc_enable"]).split(",")}
                self.assertIn(tc, pfc, f"rtsw{n} {port}: DSCP {dscp} is TC {tc}, lossy")
        tc = tcs.pop()
        for sw in s["switches"]:
            if sw["name"].startswith("rtsw"):
                host_ports = [p for p in sw["ports"] if p["name"] in ("Ethernet0", "Ethernet8")]
                self.assertTrue(all(p["queues"][tc]["packets"] > 0 for p in host_ports))
                self.assertTrue(all(q["packets"] == 0 for p in host_ports
                                    for i, q in enumerate(p["queues"]) if i not in (tc, 6)))

    def test_uncongested_ring_matches_formula(self):
        n, size = 4, 4 << 20
        out, s, stdout = self.run_coll("ring4", n, f"ring,size={size}")
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertEqual(len(c["step_done_ns"]), 2 * (n - 1))
        # one step: the chunk's packets back to back on the sender's wire, then the last one's
        # propagation, a store-and-forward of a full frame at the switch, its serialization and
        # propagation to the receiver (docs/replay.md, "Closed-loop hosts")
        per = size // n
        pkts = math.ceil(per / MTU)
        lens = [data_frame_len(min(MTU, per - i * MTU), i == 0) for i in range(pkts)]
        chunk_wire = sum(wire_ns(x) for x in lens)
        latency = 2 * PROP_NS + (max(lens) + WIRE_EXTRA - IFG) * 8000 / SPEED \
            - IFG * 8000 / SPEED
        step = chunk_wire + latency
        expect = 2 * (n - 1) * step
        # the same as 2(N-1)/N x S/B plus the per-step terms, B the wire rate per payload byte
        self.assertAlmostEqual(c["time_ns"] / expect, 1, delta=0.01)
        self.assertLess(abs(c["time_ns"] - 2 * (n - 1) / n * size * 8 / (SPEED / 1000)
                            * (chunk_wire / (per * 8 / (SPEED / 1000))) - 2 * (n - 1) * latency),
                        0.01 * expect)
        for k, t in enumerate(c["step_done_ns"]):
            self.assertAlmostEqual(t / ((k + 1) * step), 1, delta=0.01)
        # NCCL's figures: algbw = S / t, busbw = algbw x 2(n-1)/n (GB/s)
        self.assertAlmostEqual(c["algbw_GBps"], size / c["time_ns"], places=6)
        self.assertAlmostEqual(c["busbw_GBps"], size / c["time_ns"] * 2 * (n - 1) / n, places=6)
        self.assertIn("busbw", stdout)
        self.assertEqual(c["retransmitted"], 0)
        self.assertTrue(s["conservation"]["holds"])
        # each QP's data packets and bytes sent: 2(N-1) chunks of the frames above
        self.assertEqual(len(c["qps"]), n)
        for q in c["qps"]:
            self.assertEqual((q["data_packets"], q["data_bytes"]),
                             (2 * (n - 1) * pkts, 2 * (n - 1) * sum(lens)), q["host"])
        # every frame a host sent is valid RoCEv2: ICRC computed independently
        frames = read(os.path.join(out, "h0.pcap"))
        ops = set()
        for _, raw in frames:
            self.assertEqual(rocepkt.icrc(raw[14:]), raw[-4:])
            ops.add(bth(raw)[0])
        self.assertEqual(ops, {0x06, 0x07, 0x08, 0x11})
        # every rank received exactly what its predecessor wrote: 2(N-1) chunks of S/N
        for i in range(n):
            got = read(os.path.join(out, f"h{i}.pcap"))
            data = [bth(raw) for _, raw in got if bth(raw)[0] in (6, 7, 8, 10)]
            self.assertEqual(len(data), 2 * (n - 1) * pkts)
            self.assertEqual([p[2] for p in data], list(range(len(data))))

    def test_deterministic(self):
        spec = "ring,size=1M,qps=4,split=rr,drop=h1@7"
        a, _, _ = self.run_coll("det-a", 4, spec)
        b, _, _ = self.run_coll("det-b", 4, spec)
        cmp = filecmp.dircmp(a, b)
        self.assertEqual((cmp.left_only, cmp.right_only, cmp.diff_files), ([], [], []))
        self.assertTrue(cmp.common_files)
        sub = filecmp.dircmp(os.path.join(a, "sw"), os.path.join(b, "sw"))
        self.assertEqual(sub.diff_files, [])

    def data_psns(self, path, dqp=None):
        out = []
        for t, raw in read(path):
            h = bth(raw)
            if h and h[0] in (6, 7, 8, 10) and (dqp is None or h[1] == dqp):
                out.append((t, h[2]))
        return out

    def accepted_in_order(self, psns):
        """What an RC responder accepts: only the expected PSN, which then advances."""
        e, acc = 0, []
        for p in psns:
            if p == e:
                acc.append(p)
                e += 1
        return acc

    def test_drop_recovered_after_timeout(self):
        rto = 100000
        # two ranks, one packet per step: h0's first packet is lost; without NAKs nothing but the
        # timer started by that send can recover it
        out, s, _ = self.run_coll("drop-rto", 2, f"ring,size=2048,nak=off,rto={rto},drop=h0@0")
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertEqual(c["injected_drops"], 1)
        sent = self.data_psns(os.path.join(out, "h0.pcap"))
        first = {p: t for t, p in reversed(sent)}
        psn_seq = [p for _, p in sent]
        # PSN 0 lost at t0, PSN 1 (step 1) sent later; at t0 + RTO both go again, once
        self.assertEqual(psn_seq, [0, 1, 0, 1])
        self.assertEqual(sent[2][0], first[0] + rto)
        q = next(x for x in c["qps"] if x["host"] == "h0")
        self.assertEqual((q["timeouts"], q["retransmitted"], q["naks_rx"]), (1, 2, 0))
        # data sent, retransmissions included: every data frame of h0's capture
        data = [raw for _, raw in read(os.path.join(out, "h0.pcap"))
                if bth(raw) and bth(raw)[0] in (6, 7, 8, 10)]
        self.assertEqual((q["data_packets"], q["data_bytes"]),
                         (len(data), sum(len(raw) for raw in data)))
        got = [p for _, p in self.data_psns(os.path.join(out, "sw", "Ethernet8.pcap"))]
        self.assertEqual(got, [1, 0, 1])  # what reached h1: the lost one never did
        self.assertEqual(self.accepted_in_order(got), [0, 1])

    def test_drop_recovered_by_nak(self):
        # 8 packets per step; h0's third data packet (PSN 2) is lost; the next one reveals the gap
        out, s, _ = self.run_coll("drop-nak", 2, "ring,size=64K,drop=h0@2")
        c = s["collective"]
        self.assertTrue(c["complete"])
        sent = self.data_psns(os.path.join(out, "h0.pcap"))
        # the NAK: an RC ACKNOWLEDGE with syndrome 0x60 (PSN sequence error) from h1 for PSN 2
        naks = []
        for t, raw in read(os.path.join(out, "sw", "Ethernet0.pcap")):
            h = bth(raw)
            if h and h[0] == 0x11 and raw[54] & 0xE0 == 0x60:
                naks.append((t, h[2], len(raw)))
        self.assertEqual([x[1] for x in naks], [2])
        t_nak, _, nak_len = naks[0]
        arrive = t_nak + math.ceil((nak_len + WIRE_EXTRA - IFG) * 8000 / SPEED) + PROP_NS
        retx = [i for i, (t, p) in enumerate(sent) if i > 2 and p == 2]
        self.assertEqual(len(retx), 1)
        t_retx = sent[retx[0]][0]
        # go-back-N starts when the NAK has arrived and the wire is free (one frame at most)
        self.assertGreaterEqual(t_retx, arrive)
        self.assertLessEqual(t_retx, arrive + wire_ns(data_frame_len(MTU, True)) + 1)
        # the range sent before the NAK arrived goes again, once; every PSN reaches h1 in order
        before = [p for t, p in sent[:retx[0]]]
        resent = [p for _, p in sent[retx[0]:retx[0] + len(before) - 2]]
        self.assertEqual(resent, list(range(2, max(before) + 1)))
        counts = {}
        for _, p in sent:
            counts[p] = counts.get(p, 0) + 1
        self.assertEqual(sorted(p for p, k in counts.items() if k == 2), list(range(2, max(before) + 1)))
        self.assertTrue(all(k <= 2 for k in counts.values()))
        got = [p for _, p in self.data_psns(os.path.join(out, "sw", "Ethernet8.pcap"))]
        total = max(counts) + 1
        self.assertEqual(self.accepted_in_order(got), list(range(total)))
        q = next(x for x in c["qps"] if x["host"] == "h0")
        self.assertEqual((q["naks_rx"], q["timeouts"]), (1, 0))
        self.assertEqual(q["retransmitted"], max(before) - 1)

    def max_queue(self, summary, port):
        sw = summary["switches"][0]
        p = next(x for x in sw["ports"] if x["name"] == port)
        return max(q["max_depth_bytes"] for q in p["queues"])

    def test_cts_bounds_the_bottleneck_queue(self):
        senders, window, chunk, size = 3, 2, 64 << 10, 2 << 20
        spec = f"incast,ranks=4,root=3,size={size},chunk={chunk},cts={window}"
        out, s, _ = self.run_coll("cts", 4, spec)
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertEqual(s["drops"], {})
        # the queue counts frames: a chunk is its packets with their headers
        pkts = chunk // MTU
        chunk_frames = data_frame_len(MTU, True) + (pkts - 1) * data_frame_len(MTU, False)
        bound = window * chunk_frames * senders + senders * data_frame_len(MTU, True)
        q = self.max_queue(s, "Ethernet24")
        self.assertLessEqual(q, bound)
        # CTS frames: SEND ONLY, DSCP 48, one per chunk per connection, from the root
        cts = [raw for _, raw in read(os.path.join(out, "h3.pcap")) if bth(raw)[0] == 0x04]
        self.assertEqual(len(cts), senders * size // chunk)
        self.assertTrue(all(raw[15] >> 2 == 48 for raw in cts))
        self.assertEqual(sum(x["cts_rx"] for x in c["qps"]), senders * size // chunk)
        # without admission the same incast queues far beyond the bound
        _, s2, _ = self.run_coll("no-cts", 4, f"incast,ranks=4,root=3,size={size},chunk={chunk}")
        self.assertGreater(self.max_queue(s2, "Ethernet24"), 4 * bound)

    def test_dcqcn_follows_the_published_rules(self):
        # CE on h0's data frames 10, 11 (within the 50 us CNP interval: no second CNP) and 300;
        # the byte counter out of the way, so timers alone raise the rate
        g, k_ns, t_ns, f, rai, rhai = 1 / 256, 55000, 55000, 5, 40.0, 400.0
        spec = ("incast,root=1,size=2M,dcqcn=on,dcqcn-b=1G,ce=h0@10,ce=h0@11,ce=h0@300,"
                "dcqcn-rai=40,dcqcn-rhai=400")
        out, s, stdout = self.run_coll("dcqcn", 2, spec)
        c = s["collective"]
        self.assertTrue(c["complete"])
        # the responder's CNPs: opcode 0x81, BECN, DSCP 48, valid ICRC; when each reached h0
        cnps = []
        for t, raw in read(os.path.join(out, "sw", "Ethernet0.pcap")):
            h = bth(raw)
            if h and h[0] == 0x81:
                self.assertEqual(raw[15] >> 2, 48)
                self.assertTrue(raw[46] & 0x40)
                self.assertEqual(rocepkt.icrc(raw[14:]), raw[-4:])
                cnps.append(t + math.ceil((len(raw) + WIRE_EXTRA - IFG) * 8000 / SPEED) + PROP_NS)
        self.assertEqual(len(cnps), 2)
        ce = [raw[15] & 3 for _, raw in read(os.path.join(out, "h0.pcap")) if bth(raw)[0] != 0x11]
        self.assertEqual([i for i, e in enumerate(ce) if e == 3], [10, 11, 300])
        # the rules (Zhu et al. 2015): cut Rt = Rc, Rc *= 1 - a/2, a = (1-g)a + g; a *= 1-g every
        # K without a CNP; every T a timer stage: Rc = (Rt + Rc)/2 for the first F, then Rt +=
        # R_AI (and R_HAI x (stage - F) past F in both counters, never here) first
        line = float(SPEED)
        rc = rt = line
        alpha, stage = 1.0, 0
        alpha_at = timer_at = None
        expect = []
        events = sorted([(t, "cnp") for t in cnps])
        horizon = 100 * 10**6
        while True:
            nxt = [(t, kind) for t, kind in ((alpha_at, "alpha"), (timer_at, "timer")) if t]
            if events:
                nxt.append(events[0])
            if not nxt:
                break
            t, kind = min(nxt, key=lambda x: (x[0], {"cnp": 0, "alpha": 1, "timer": 2}[x[1]]))
            if t > horizon:
                break
            if kind == "cnp":
                events.pop(0)
                rt, rc = rc, rc * (1 - alpha / 2)
                alpha = (1 - g) * alpha + g
                stage = 0
                alpha_at, timer_at = t + k_ns, t + t_ns
            elif kind == "alpha":
                alpha *= 1 - g
                alpha_at = alpha_at + k_ns if rc < line else None
            else:
                timer_at += t_ns
                stage += 1
                if stage >= f:
                    rt = min(line, rt + rai)
                rc = (rt + rc) / 2
                if line - rc < 1e-6:
                    rc = rt = line
                    timer_at = None
            if kind != "alpha":
                expect.append((t, rc, rt, alpha))
        got = []
        with open(os.path.join(out, "events.jsonl")) as fh:
            for line_ in fh:
                e = json.loads(line_)
                if e["event"] == "dcqcn_rate":
                    got.append((e["t"], e["rate_mbps"], e["target_mbps"], e["alpha"]))
        self.assertEqual(len(got), len(expect))
        for a, b in zip(got, expect):
            self.assertEqual(a[0], b[0])
            for x, y in zip(a[1:], b[1:]):
                self.assertAlmostEqual(x, y, delta=1e-9 * max(1, abs(y)))
        q = next(x for x in c["qps"] if x["host"] == "h0")
        self.assertEqual((q["cnps_rx"], q["rate_cuts"]), (2, 2))
        self.assertEqual(q["min_rate_mbps"], int(min(b[1] for b in expect)))
        # the sender's departures obey the rate in force: each packet waits its wire time at Rc
        data = [(t, len(raw)) for t, raw in read(os.path.join(out, "h0.pcap"))]
        changes = [b[0] for b in expect]
        checked = 0
        for (t1, l1), (t2, _) in zip(data, data[1:]):
            before = [b for b in expect if b[0] <= t1]
            if not before or any(t1 < x <= t2 for x in changes) or before[-1][1] >= line:
                continue
            r = int(before[-1][1])
            self.assertEqual(t2 - t1, math.ceil((l1 + WIRE_EXTRA) * 8000 / r))
            checked += 1
        self.assertGreater(checked, 100)
        self.assertIn("2 CNPs, 2 rate cuts", stdout)

    def flows_by_port(self, path):
        """UDP source port and dest QP of every data frame in a capture, with its time."""
        out = []
        for t, raw in read(path):
            h = bth(raw)
            if h and h[0] in (6, 7, 8, 10):
                out.append((t, (raw[26:34], struct.unpack(">H", raw[34:36])[0], h[1])))
        return out

    def test_switch_failure_reroutes_through_resilient_buckets(self):
        spec = "ring,size=8M,qps=4"
        fail_t = 50000
        base, sb, _ = self.run_coll("fail-base", 8, spec, config=ZONE2)
        r = subprocess.run([ROCESW, "replay", "--config", ZONE2, "--collective", spec,
                            "--fail", f"ctsw1@{fail_t // 1000}us", "--out",
                            os.path.join(self.dir, "fail-ctsw1")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = os.path.join(self.dir, "fail-ctsw1")
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertTrue(s["conservation"]["holds"])
        # half the spine is gone: slower than without the failure
        self.assertGreater(c["time_ns"], sb["collective"]["time_ns"] * 1.1)
        for rack in range(1, 5):
            sw = os.path.join(out, f"rtsw{rack}")
            to_ctsw1 = self.flows_by_port(os.path.join(sw, "Ethernet256.pcap"))
            to_ctsw2 = self.flows_by_port(os.path.join(sw, "Ethernet264.pcap"))
            # after the failure only what was queued drains into the dead link, all of it lost
            late = sum(1 for t, _ in read(os.path.join(sw, "Ethernet256.pcap")) if t >= fail_t)
            d = next(d for l in s["links"] for d in l["directions"]
                     if d["from"] == f"rtsw{rack}|Ethernet256")
            self.assertEqual(d["lost_link_down"], late, rack)
            # resilient buckets: a flow that used ctsw2 before keeps it; ctsw1's move there
            before2 = {k for t, k in to_ctsw2 if t < fail_t}
            before1 = {k for t, k in to_ctsw1}
            after2 = {k for t, k in to_ctsw2 if t >= fail_t}
            self.assertTrue(before2 & after2, rack)
            self.assertFalse(before2 & before1, rack)
            self.assertTrue(after2 <= before1 | before2, rack)
        # lost frames were recovered by go-back-N
        self.assertGreater(c["retransmitted"], 0)
        lost = sum(d.get("lost_link_down", 0) for l in s["links"] for d in l["directions"])
        self.assertGreater(lost + sum(s["drops"].values()), 0)

    def pin_zone(self, fallback):
        d = os.path.join(self.dir, f"pin-{fallback}")
        os.makedirs(d, exist_ok=True)
        for n in (1, 2):
            with open(os.path.join(d, f"sw{n}.yaml"), "w") as f:
                f.write(pin_switch(n, fallback))
        with open(os.path.join(d, "zone.yaml"), "w") as f:
            f.write(PIN_ZONE)
        return os.path.join(d, "zone.yaml")

    def test_pinned_route_falls_back_when_its_link_fails(self):
        spec = "incast,root=1,size=1M,rto=20000,retry=2"
        for fallback in (True, False):
            out = os.path.join(self.dir, f"pin-out-{fallback}")
            r = subprocess.run([ROCESW, "replay", "--config", self.pin_zone(fallback),
                                "--collective", spec, "--fail", "sw1|Ethernet8@20us", "--out",
                                out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "summary.json")) as f:
                s = json.load(f)
            pinned = self.flows_by_port(os.path.join(out, "sw1", "Ethernet8.pcap"))
            other = self.flows_by_port(os.path.join(out, "sw1", "Ethernet16.pcap"))
            # pinned to the first link while it is up
            self.assertTrue(pinned and all(t < 20000 for t, _ in pinned))
            if fallback:
                # then the main table's ECMP route, through the remaining member
                self.assertTrue(s["collective"]["complete"])
                self.assertTrue(other and all(t >= 20000 for t, _ in other))
            else:
                # kept: blackholed at the down port until the QP gives up
                self.assertFalse(s["collective"]["complete"])
                self.assertEqual(other, [])
                self.assertGreater(s["drops"].get("egress_port_down", 0), 0)
                self.check_retries_exhausted(out, s, r.stdout)

    def check_retries_exhausted(self, out, s, stdout):
        """The blackholed run says why it is incomplete: h0's QP to h1 gave up after retry + 1 =
        3 timeouts in a row, each rto = 20 us after the last progress: the last ACK h0 received
        (sw1's Ethernet0 capture: its start, plus its wire time and 15 ns of cable) restarted
        the timer, so it gave up 3 x 20 us after that ACK arrived."""
        c = s["collective"]
        acks = [(t, raw) for t, raw in read(os.path.join(out, "sw1", "Ethernet0.pcap"))
                if bth(raw) and bth(raw)[0] == 0x11]
        t, raw = acks[-1]
        gave_up = t + wire_ns(len(raw)) + PROP_NS + 3 * 20000
        self.assertEqual(len(c["qps_in_error"]), 1, c["qps_in_error"])
        q = c["qps_in_error"][0]
        self.assertEqual((q["host"], q["peer"], q["qp"], q["error"]), ("h0", "h1", 0, True))
        self.assertLessEqual(abs(q["error_ns"] - gave_up), 1, (q["error_ns"], gave_up))
        self.assertLess(q["unacked_psn"], q["sent_psn"])
        self.assertLess(c["transfers_arrived"], c["transfers"])
        why = (f"retries exhausted: 1 QP gave up after 3 timeouts in a row without progress "
               f"(retry 2): h0 → h1 QP 0 at {q['error_ns'] / 1e3:.3f} us; "
               f"{c['transfers_arrived']} of {c['transfers']} transfers arrived")
        self.assertEqual(c["incomplete_reason"], why)
        self.assertIn(f"collective incast over 2 ranks: NOT complete: {why}\n", stdout)
        with open(os.path.join(out, "events.jsonl")) as f:
            ev = [json.loads(l) for l in f if "qp_retry_exceeded" in l]
        self.assertEqual([(e["t"], e["host"], e["peer"], e["qp"], e["timeouts"]) for e in ev],
                         [(q["error_ns"], "h0", "h1", 0, 3)])

    def test_static_route_backup_takes_over_only_on_failure(self):
        """SONiC's STATIC_ROUTE with a distance per next hop (FRR's floating static route):
        sw1 reaches h1 over the first link at distance 0, the second at 10. Every data frame
        of the incast leaves by the first link while it is up, none by the second; once the
        first fails (20 us) the rest leave by the second, and the collective completes. The same
        next hops at one distance are an ECMP group whose 16 QPs use both links."""
        d = os.path.join(self.dir, "backup")
        os.makedirs(d, exist_ok=True)
        for n in (1, 2):
            text = pin_switch(n).split("POLICY_ROUTE")[0]
            if n == 1:
                text = text.replace('"10.1.0.3/32": {nexthop_group: up}',
                                    '"10.1.0.3/32": {nexthop: "10.254.0.1,10.254.0.3", '
                                    'distance: "0,10"}')
                self.assertIn("distance", text)
                sw1 = text
            with open(os.path.join(d, f"sw{n}.yaml"), "w") as f:
                f.write(text)
        with open(os.path.join(d, "zone.yaml"), "w") as f:
            f.write(PIN_ZONE)
        # 16 QPs: over an ECMP group of both links their flows would use both
        spec = "incast,root=1,size=1M,qps=16"
        for distance, fail in (("0,10", False), ("0,10", True), ("0,0", False)):
            with open(os.path.join(d, "sw1.yaml"), "w") as f:
                f.write(sw1.replace('distance: "0,10"', f'distance: "{distance}"'))
            out = os.path.join(self.dir, f"backup-out-{distance}-{fail}")
            r = subprocess.run([ROCESW, "replay", "--config", os.path.join(d, "zone.yaml"),
                                "--collective", spec, "--out", out] +
                               (["--fail", "sw1|Ethernet8@20us"] if fail else []),
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "summary.json")) as f:
                s = json.load(f)
            self.assertTrue(s["collective"]["complete"], fail)
            first = self.flows_by_port(os.path.join(out, "sw1", "Ethernet8.pcap"))
            second = self.flows_by_port(os.path.join(out, "sw1", "Ethernet16.pcap"))
            self.assertTrue(first, fail)
            if distance == "0,0":
                self.assertTrue(second, "equal distances: ECMP over both links")
            elif not fail:
                self.assertEqual(second, [], "the backup carries nothing while the first is up")
            else:
                self.assertTrue(all(t < 20000 for t, _ in first))
                self.assertTrue(second and all(t >= 20000 for t, _ in second))

    def data_bytes_received(self, out, host):
        """RDMA WRITE payload bytes that reached a host (the switch port towards it)."""
        port = f"Ethernet{8 * int(host[1:])}"
        total = 0
        seen = set()
        for _, raw in read(os.path.join(out, "sw", f"{port}.pcap")):
            h = bth(raw)
            if not h or h[0] not in (6, 7, 8, 10) or (h[1], h[2]) in seen:
                continue
            seen.add((h[1], h[2]))
            ext = 16 if h[0] in (6, 10) else 0
            pad = (raw[43] >> 4) & 3
            total += len(raw) - 54 - ext - pad - 4
        return total

    def test_patterns_move_what_nccl_moves(self):
        n, size = 4, 256 << 10
        # bytes each rank receives (NCCL's semantics for a buffer of `size`)
        cases = {
            "ring": (2 * (n - 1), [2 * (n - 1) * size // n] * n),
            "allgather": (n - 1, [(n - 1) * size // n] * n),
            "reducescatter": (n - 1, [(n - 1) * size // n] * n),
            "alltoall": (1, [(n - 1) * (size // n)] * n),
            # binary tree of 4: 0 <- 1, 2; 1 <- 3. Up: 1 gets 3's, 0 gets 1's and 2's; down: 1
            # and 2 get 0's, 3 gets 1's
            "tree": (4, [2 * size, 2 * size, size, size]),
            "incast": (1, [0, 0, 0, 3 * size]),
        }
        for pattern, (steps, per_rank) in cases.items():
            extra = ",root=3" if pattern == "incast" else ""
            out, s, _ = self.run_coll(f"pat-{pattern}", n,
                                      f"{pattern},size={size},chunk=32K,qps=2{extra}")
            c = s["collective"]
            self.assertTrue(c["complete"], pattern)
            self.assertEqual(len(c["step_done_ns"]), steps, pattern)
            self.assertEqual(c["step_done_ns"], sorted(c["step_done_ns"]), pattern)
            got = [self.data_bytes_received(out, f"h{i}") for i in range(n)]
            self.assertEqual(got, per_rank, pattern)
            self.assertEqual(c["busbw_factor"], {"ring": 1.5, "tree": 1.5, "incast": 1.0}.get(
                pattern, 0.75), pattern)

    def test_ring_loops_with_cts_complete(self):
        # 4 loops of 16 KiB chunks pipeline through the ring; a receiver grants 2 chunks ahead
        # in the ring's order (it deadlocked when a later loop's first step took a QP first)
        out, s, _ = self.run_coll("ring-cts", 4, "ring,size=256K,chunk=16K,cts=2")
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertEqual(sum(q["cts_rx"] for q in c["qps"]), 4 * 4 * 2 * 3)
        self.assertEqual([self.data_bytes_received(out, f"h{i}") for i in range(4)],
                         [2 * 3 * (256 << 10) // 4] * 4)

    def test_captures_keep_the_headers_of_generated_frames(self):
        """A collective's payload is generated (zeros): by default its captures keep the first
        128 bytes of each frame (every RoCE header), as tcpdump -s 128 would, the record's
        length being the frame's on the wire. Against the same run with whole frames: the same
        records, times and first bytes in every capture, and the same summary.json."""
        spec = "ring,size=256K,qps=2"
        _, s_whole, _ = self.run_coll("snap-whole", 4, spec)
        out = os.path.join(self.dir, "snap-cut")
        r = subprocess.run([ROCESW, "replay", "--config", self.zone(4), "--collective", spec,
                            "--out", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the first 128 bytes of each frame", r.stdout)
        whole = os.path.join(self.dir, "snap-whole")
        names = sorted(os.path.relpath(os.path.join(d, f), out)
                       for d, _, fs in os.walk(out) for f in fs if f.endswith(".pcap"))
        self.assertEqual(len(names), 4 + 4)  # every host and every switch port
        records = 0
        for name in names:
            cut = RawPcapReader(os.path.join(out, name))
            self.assertEqual(cut.snaplen, 128, name)
            got = [(m.sec, m.usec, m.caplen, m.wirelen, bytes(d)) for d, m in cut]
            cut.close()
            want = [(t // 10**9, t % 10**9, min(128, len(raw)), len(raw), raw[:128])
                    for t, raw in read(os.path.join(whole, name))]
            self.assertEqual(got, want, name)
            records += len(got)
        self.assertGreater(records, 4 * 2 * 3 * (256 << 10) // 4 // MTU)
        with open(os.path.join(out, "summary.json")) as f:
            self.assertEqual(json.load(f), s_whole)

    def test_until_cut_is_recorded(self):
        # a run stopped by --until with frames still queued says so, in summary.json and in
        # text, with its unfinished flows counted from the flows themselves; a run that ends by
        # itself has none of it
        until = 20000
        out = os.path.join(self.dir, "cut")
        r = subprocess.run([ROCESW, "replay", "--config", self.zone(4), "--collective",
                            "ring,size=1M", "--until", str(until), "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["cut_by_until_ns"], until)
        unfinished = sum(1 for fl in s["flows"] if fl["packets_out"] < fl["packets_in"])
        self.assertGreater(unfinished, 0)
        self.assertEqual(s["incomplete_flows"], unfinished)
        c = s["conservation"]
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("stopped by --until")]
        self.assertEqual(len(line), 1, r.stdout)
        self.assertIn(f"{c['queued']} frames queued, {c['in_flight']} in flight", line[0])
        self.assertIn(f"{unfinished} of {len(s['flows'])} flows incomplete", line[0])
        _, whole, text = self.run_coll("uncut", 4, "ring,size=64K")
        self.assertNotIn("cut_by_until_ns", whole)
        self.assertNotIn("incomplete_flows", whole)
        self.assertNotIn("stopped by --until", text)

    def test_progress_line_on_a_terminal_only(self):
        # on a terminal a run shows where it is (virtual time within --until, a hop rate, the
        # frames in so far, the time left); with stderr not a terminal it stays silent
        import pty
        until = 300000  # 0.3 ms: tens of thousands of events, the first line after 4096
        args = [ROCESW, "replay", "--config", self.zone(4), "--collective", "ring,size=16M",
                "--until", str(until), "--captures", "none"]
        master, slave = pty.openpty()
        out = os.path.join(self.dir, "progress")
        p = subprocess.Popen(args + ["--out", out], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        self.assertEqual(p.wait(), 0, seen)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        lines = [ln for ln in seen.decode().replace("\r", "\n").splitlines()
                 if ln.startswith("replay:")]
        self.assertTrue(lines, seen)
        m = re.match(r"replay: ([\d.]+) s virtual, ([\d.]+) M switch-hops/s, (\d+) frames in, "
                     r"(\d+) delivered, about (\d+) s to --until", lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertLessEqual(float(m[1]), until / 1e9)
        self.assertGreater(float(m[2]), 0)
        self.assertLessEqual(int(m[3]), s["conservation"]["entered"])
        self.assertLessEqual(int(m[4]), int(m[3]))
        r = subprocess.run(args + ["--out", out + "-quiet"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("replay:", r.stderr)

    def test_yaml_spec_is_the_compact_spec(self):
        d = os.path.join(self.dir, "yaml-spec")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "coll.yaml")
        with open(path, "w") as f:
            f.write("pattern: ring\nranks: [h2, h0, h1]\nsize: 96K\nqps: 2\nsplit: rr\n"
                    "drop: [h0@3]\n")
        a, sa, _ = self.run_coll("yaml-a", 3, path)
        b, sb, _ = self.run_coll("yaml-b", 3, "ring,ranks=h2:h0:h1,size=96K,qps=2,split=rr,drop=h0@3")
        self.assertEqual(sa["collective"]["ranks"], ["h2", "h0", "h1"])
        for name in ("h0.pcap", "h1.pcap", "h2.pcap", "summary.json"):
            self.assertTrue(filecmp.cmp(os.path.join(a, name), os.path.join(b, name), shallow=False),
                            name)

    def test_bad_specs(self):
        for spec, why in [("ring,qps=0", "qps=0: expects 1 to 64"),
                          ("wheel", "starts with a pattern"),
                          ("ring,ranks=h0:h9", "no host named 'h9'"),
                          ("ring,ranks=h0:h0", "host 'h0' twice"),
                          ("incast,root=5", "root=5 but there are 2 ranks"),
                          ("ring,size=1", "less than a byte per QP"),
                          ("ring,colour=blue", "unknown key 'colour'"),
                          ("ring,drop=h0", "HOST@N"),
                          ("ring,dcqcn=maybe", "dcqcn=maybe: expects on or off"),
                          ("ring,dcqcn-g=2", "a gain between 0 and 1")]:
            r = self.run_coll("bad", 2, spec, ok=False)
            self.assertEqual(r.returncode, 2, spec)
            self.assertIn(why, r.stderr, spec)
        for fail, why in [("sw@1x", "the time must be ns"), ("nowhere@5", "no switch, host"),
                          ("sw", "expects WHAT@T")]:
            r = subprocess.run([ROCESW, "replay", "--config", self.zone(2), "--collective", "ring",
                                "--fail", fail, "--out", os.path.join(self.dir, "bad")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, fail)
            self.assertIn(why, r.stderr, fail)


if __name__ == "__main__":
    unittest.main()
