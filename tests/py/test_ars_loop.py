"""ARS (docs/ars.md) under a closed-loop collective (`rocesw replay --collective`), with RC
receivers that are strict (`ooo=nak`) or place out-of-order packets (`ooo=accept`,
docs/replay.md "Receivers and reordering"). Two switches joined by two links of different
lengths (3 m and 300 m: 1.485 us apart), h0 on sw1 sends to h1 on sw2, both switches spray
RoCE per packet. Everything is checked against the captures, read here independently:
- ooo=nak: the NAKs h1 sends carry exactly the PSNs a strict RC responder (REFERENCE §7) fed
  the arrival order h1 saw would NAK; the sender goes back N (retransmissions);
- ooo=accept: every PSN reaches h1 once, no NAK, nothing retransmitted; the out-of-order count,
  the largest PSN distance and the reorder buffer in summary.json are those of the capture;
- a flowlet-quality run is byte-identical when run again;
- with a forced collision (static ECMP puts two flows of a ring on one uplink, read from the
  captures) the ring takes twice its wire bound; spraying with accepting receivers reaches the
  bound, with strict ones it retransmits and is slower; a flowlet run takes the bound of where
  its first packets were placed;
- ooo= specs that make no sense are refused with the reason."""
import filecmp
import os
import json
import subprocess
import unittest

from scapy.utils import RawPcapReader

from common import ROCESW, tmpdir
from ring_bound import ring_wire_bound_ns

SIZE = 256 << 10
MTU = 4096
OP_DATA = (6, 7, 8, 10)


def switch_yaml(n, mode):
    """sw1 (h0 at 10.1.0.1) or sw2 (h1 at 10.1.0.3); the far host over group `up` (both
    links), which ARS runs in `mode` for RoCE (UDP 4791)."""
    me, far = (1, 2) if n == 1 else (2, 1)
    host_ip, far_ip = f"10.1.0.{2 * me - 1}", f"10.1.0.{2 * far - 1}"
    peer = [f"10.254.0.{1 - (n - 1) + 2 * k}" for k in range(2)]
    ars = ref = ""
    if mode:
        ars = ("ARS_PROFILE:\n  default: {random_seed: 1}\n"
               f"ARS_OBJECT:\n  a: {{assign_mode: {mode}, match_l4_dst_port: 4791}}\n")
        ref = ", ars_object: a"
    return f"""DEVICE_METADATA:
  localhost: {{hostname: sw{n}, mac: "02:00:00:00:01:00"}}
PORT:
  Ethernet0: {{speed: 100000, role: host, mtu: 9100}}
  Ethernet8: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:08"}}
  Ethernet16: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:10"}}
CABLE_LENGTH:
  AZURE: {{Ethernet0: 3m, Ethernet8: 3m, Ethernet16: 300m}}
NEIGH:
  "Ethernet0|{host_ip}": {{neigh: "02:00:00:01:00:0{me - 1}"}}
  "Ethernet8|{peer[0]}": {{neigh: "02:00:00:00:{far}1:08"}}
  "Ethernet16|{peer[1]}": {{neigh: "02:00:00:00:{far}1:10"}}
{ars}NEXTHOP_GROUP:
  up: {{nexthop: "{peer[0]},{peer[1]}"{ref}}}
STATIC_ROUTE:
  "{host_ip}/32": {{nexthop: "{host_ip}"}}
  "{far_ip}/32": {{nexthop_group: up}}
"""


ZONE = """SWITCH:
  sw1: {config: sw1.yaml}
  sw2: {config: sw2.yaml}
HOST:
  h0: {}
  h1: {}
LINK:
  - {a: h0, b: "sw1|Ethernet0", length: 3m}
  - {a: h1, b: "sw2|Ethernet0", length: 3m}
  - {a: "sw1|Ethernet8", b: "sw2|Ethernet8", length: 3m}
  - {a: "sw1|Ethernet16", b: "sw2|Ethernet16", length: 300m}
"""


def frames(path):
    r = RawPcapReader(path)
    try:
        return [bytes(d) for d, _ in r]
    finally:
        r.close()


def bth(raw):
    """(opcode, PSN, AETH syndrome or None) of a RoCEv2 frame over IPv4, else None."""
    if len(raw) < 54 or raw[12:14] != b"\x08\x00" or raw[23] != 17 or raw[36:38] != b"\x12\xb7":
        return None
    op, psn = raw[42], int.from_bytes(raw[51:54], "big")
    return op, psn, raw[54] if op == 0x11 else None


def strict_naks(arrivals):
    """The NAKs a strict RC responder sends for PSNs arriving in this order: the first packet
    past a gap gets one NAK carrying the expected PSN, then silence until that PSN comes."""
    e, sent, naks = 0, False, []
    for p in arrivals:
        if p == e:
            e, sent = e + 1, False
        elif p > e and not sent:
            naks.append(e)
            sent = True
    return naks


def placed(arrivals):
    """An out-of-order-placing responder fed this order: (out-of-order packets, largest PSN
    distance past the expected one, most packets held past a gap at once)."""
    e, held, ooo, dist, most = 0, set(), 0, 0, 0
    for p in arrivals:
        if p > e:
            ooo += 1
            dist = max(dist, p - e)
            held.add(p)
            most = max(most, len(held))
        elif p == e:
            e += 1
            while e in held:
                held.remove(e)
                e += 1
    return ooo, dist, most


class ArsLoop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()

    def run_coll(self, name, mode, spec, ok=True):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        for n in (1, 2):
            with open(os.path.join(d, f"sw{n}.yaml"), "w") as f:
                f.write(switch_yaml(n, mode))
        with open(os.path.join(d, "zone.yaml"), "w") as f:
            f.write(ZONE)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", os.path.join(d, "zone.yaml"),
                            "--collective", spec, "--out", out], capture_output=True, text=True)
        if not ok:
            return r
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return out, json.load(f), r.stdout

    def arrivals(self, out):
        """Data PSNs in the order h1 received them: what sw2 put on h1's link."""
        return [b[1] for b in map(bth, frames(os.path.join(out, "sw2", "Ethernet0.pcap")))
                if b and b[0] in OP_DATA]

    def h1_naks(self, out):
        return [b[1] for b in map(bth, frames(os.path.join(out, "h1.pcap")))
                if b and b[0] == 0x11 and b[2] & 0xE0 == 0x60]

    def test_spray_strict_receiver_goes_back_n(self):
        out, s, text = self.run_coll("nak", "per_packet_random",
                                     "incast,ranks=h0:h1,root=1,size=256K,ooo=nak")
        c = s["collective"]
        self.assertTrue(c["complete"])
        got = self.arrivals(out)
        naks = self.h1_naks(out)
        self.assertGreater(len(naks), 0, "the 1.5 us longer path reorders sprayed packets")
        self.assertEqual(naks, strict_naks(got))
        (q,) = [x for x in c["qps"] if x["host"] == "h0"]
        self.assertEqual((q["naks_tx"], q["naks_rx"]), (len(naks), len(naks)))
        sent = [b[1] for b in map(bth, frames(os.path.join(out, "h0.pcap")))
                if b and b[0] in OP_DATA]
        pkts = SIZE // MTU
        self.assertEqual(q["retransmitted"], len(sent) - pkts)
        self.assertGreater(q["retransmitted"], 0)
        # out-of-order as a strict NIC counts them: every arrival past the expected PSN
        e, ooo = 0, 0
        for p in got:
            if p == e:
                e += 1
            elif p > e:
                ooo += 1
        self.assertEqual(q["ooo_packets"], ooo)
        self.assertEqual(c["ooo"], "nak")
        self.assertIn("reordering: ", text)
        # both switches' ARS decided every RoCE frame they routed to the group
        sw1 = next(x for x in s["switches"] if x["name"] == "sw1")
        self.assertEqual(sw1["ars"][0]["RSW_ARS_PACKETS"], len(sent))

    def test_spray_accepting_receiver_completes_without_retransmission(self):
        out, s, _ = self.run_coll("accept", "per_packet_random",
                                  "incast,ranks=h0:h1,root=1,size=256K,ooo=accept")
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertEqual(c["retransmitted"], 0)
        self.assertEqual(self.h1_naks(out), [])
        got = self.arrivals(out)
        pkts = SIZE // MTU
        self.assertEqual(sorted(got), list(range(pkts)), "every PSN once")
        self.assertNotEqual(got, sorted(got), "and not in order")
        ooo, dist, most = placed(got)
        (q,) = [x for x in c["qps"] if x["host"] == "h0"]
        self.assertEqual((q["ooo_packets"], q["ooo_max_distance"], q["reorder_max_packets"]),
                         (ooo, dist, most))
        self.assertEqual(q["reorder_max_bytes"], most * MTU)  # every packet here is full
        self.assertEqual(c["ooo"], "accept")
        # the cumulative ACKs never go back
        acks = [b[1] for b in map(bth, frames(os.path.join(out, "h1.pcap")))
                if b and b[0] == 0x11]
        self.assertEqual(acks, sorted(acks))
        self.assertEqual(acks[-1], pkts - 1)

    def test_accept_only_where_asked(self):
        # h0 accepts but h1, the receiver, is strict: as ooo=nak
        _, s, _ = self.run_coll("accept-h0", "per_packet_random",
                                "incast,ranks=h0:h1,root=1,size=256K,ooo=accept:h0")
        c = s["collective"]
        self.assertEqual(c["ooo"], ["h0"])
        self.assertGreater(c["retransmitted"], 0)

    def test_flowlet_rerun_byte_identical(self):
        spec = "ring,ranks=h0:h1,size=1M,qps=2,ooo=accept"
        a, _, _ = self.run_coll("det-a", "per_flowlet_quality", spec)
        b, _, _ = self.run_coll("det-b", "per_flowlet_quality", spec)
        for sub in ("", "sw1", "sw2"):
            cmp = filecmp.dircmp(os.path.join(a, sub), os.path.join(b, sub))
            self.assertEqual((cmp.left_only, cmp.right_only, cmp.diff_files), ([], [], []), sub)
            self.assertTrue(cmp.common_files)

    def test_bad_ooo(self):
        for spec, why in [("ring,ooo=maybe", "ooo=maybe: expects nak, accept, or accept:HOST"),
                          ("ring,ooo=accept:h9", "ooo: no host named 'h9'"),
                          ("ring,ooo=accept:", "expects nak, accept")]:
            r = self.run_coll("bad", None, spec, ok=False)
            self.assertEqual(r.returncode, 2, spec)
            self.assertIn(why, r.stderr, spec)


def collision_switch(n, mode, seed):
    """sw1 (h0, h2) or sw2 (h1, h3), joined by two equal 3 m links; the far hosts through group
    `up`. h0 -> h1 and h2 -> h3 (and back) hash onto the same uplink under static ECMP (read
    from the captures: the test checks it)."""
    me, far = (1, 2) if n == 1 else (2, 1)
    hosts = [0, 2] if n == 1 else [1, 3]
    peer = [f"10.254.0.{1 - (n - 1) + 2 * k}" for k in range(2)]
    ars = ref = ""
    if mode:
        # sampled every 1 us: 12500 bytes is 100G for the whole interval (the top load band)
        ars = (f"ARS_PROFILE:\n  default: {{random_seed: {seed}, sampling_interval: 1, "
               "past_load_max_value: 12500, future_load_max_value: 100000}\n"
               f"ARS_OBJECT:\n  a: {{assign_mode: {mode}, match_l4_dst_port: 4791}}\n")
        ref = ", ars_object: a"
    neigh = "\n".join(f'  "Ethernet{24 * k}|10.1.0.{2 * h + 1}": {{neigh: "02:00:00:01:00:0{h}"}}'
                      for k, h in enumerate(hosts))
    routes = "\n".join(f'  "10.1.0.{2 * h + 1}/32": {{nexthop: "10.1.0.{2 * h + 1}"}}'
                       for h in hosts)
    return f"""DEVICE_METADATA:
  localhost: {{hostname: sw{n}, mac: "02:00:00:00:01:00"}}
PORT:
  Ethernet0: {{speed: 100000, role: host, mtu: 9100}}
  Ethernet24: {{speed: 100000, role: host, mtu: 9100}}
  Ethernet8: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:08"}}
  Ethernet16: {{speed: 100000, role: uplink, mtu: 9100, mac: "02:00:00:00:{me}1:10"}}
CABLE_LENGTH:
  AZURE: {{Ethernet0: 3m, Ethernet24: 3m, Ethernet8: 3m, Ethernet16: 3m}}
NEIGH:
{neigh}
  "Ethernet8|{peer[0]}": {{neigh: "02:00:00:00:{far}1:08"}}
  "Ethernet16|{peer[1]}": {{neigh: "02:00:00:00:{far}1:10"}}
{ars}NEXTHOP_GROUP:
  up: {{nexthop: "{peer[0]},{peer[1]}"{ref}}}
STATIC_ROUTE:
{routes}
  "10.1.0.0/24": {{nexthop_group: up}}
"""


COLLISION_ZONE = """SWITCH:
  sw1: {config: sw1.yaml}
  sw2: {config: sw2.yaml}
HOST:
  h0: {}
  h1: {}
  h2: {}
  h3: {}
LINK:
  - {a: h0, b: "sw1|Ethernet0", length: 3m}
  - {a: h2, b: "sw1|Ethernet24", length: 3m}
  - {a: h1, b: "sw2|Ethernet0", length: 3m}
  - {a: h3, b: "sw2|Ethernet24", length: 3m}
  - {a: "sw1|Ethernet8", b: "sw2|Ethernet8", length: 3m}
  - {a: "sw1|Ethernet16", b: "sw2|Ethernet16", length: 3m}
"""

RING = "ring,ranks=h0:h1:h2:h3,size=4M"  # h0 -> h1 and h2 -> h3 cross sw1 -> sw2 together


def wire_bound_ns(n=4, size=4 << 20, speed=100000):
    return ring_wire_bound_ns(n, size, speed)


class ArsCollision(unittest.TestCase):
    """Static ECMP puts both sw1 -> sw2 flows of a 4-rank ring on one uplink: the ring takes
    twice its wire bound. ARS against it: spraying with accepting receivers reaches the bound,
    with strict ones collapses into go-back-N; a flowlet's first placement (all bands equal at
    t = 0, so the seeded tie-break) decides the run, since the ring's flows never pause long
    enough for a flowlet to move: each outcome is the bound its placement gives."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()

    def run_ring(self, name, mode, ooo="nak", seed=1):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        for n in (1, 2):
            with open(os.path.join(d, f"sw{n}.yaml"), "w") as f:
                f.write(collision_switch(n, mode, seed))
        with open(os.path.join(d, "zone.yaml"), "w") as f:
            f.write(COLLISION_ZONE)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", os.path.join(d, "zone.yaml"),
                            "--collective", f"{RING},ooo={ooo}", "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            c = json.load(f)["collective"]
        self.assertTrue(c["complete"])
        self.assertGreaterEqual(c["time_ns"], wire_bound_ns(), "no run beats the wire")
        return out, c

    def uplinks_of(self, out):
        """The sw1 uplinks each far destination's data frames left by (IPv4 dst byte 4)."""
        used = {}
        for port in ("Ethernet8", "Ethernet16"):
            for raw in frames(os.path.join(out, "sw1", f"{port}.pcap")):
                b = bth(raw)
                if b and b[0] in OP_DATA:
                    used.setdefault(raw[33], set()).add(port)
        return used

    def test_static_collides_spray_and_flowlet_do_not_lose(self):
        bound = wire_bound_ns()
        out, static = self.run_ring("static", None)
        used = self.uplinks_of(out)
        self.assertEqual(set(used), {3, 7})
        self.assertEqual(len(used[3] | used[7]), 1, f"static ECMP collides: {used}")
        self.assertAlmostEqual(static["time_ns"] / (2 * bound), 1, delta=0.01)
        # spraying, receivers placing out of order: the wire bound (ACKs and reordering jitter)
        _, spray = self.run_ring("spray-accept", "per_packet_quality", "accept")
        self.assertEqual(spray["retransmitted"], 0)
        self.assertLess(spray["time_ns"], 1.05 * bound)
        self.assertGreater(spray["ooo_packets"], 0)
        # the same spraying, strict receivers: go-back-N, slower than the spray that accepts
        _, strict = self.run_ring("spray-nak", "per_packet_quality", "nak")
        self.assertGreater(strict["retransmitted"], 0)
        self.assertGreater(strict["time_ns"], spray["time_ns"])
        # flowlets: whatever the first placement, the time is the bound that placement gives,
        # and never worse than static; seed 1 separates the flows, seed 2 does not
        for seed, apart in ((1, True), (2, False)):
            out, fl = self.run_ring(f"flowlet-{seed}", "per_flowlet_quality", seed=seed)
            used = self.uplinks_of(out)
            self.assertTrue(all(len(v) == 1 for v in used.values()), "flowlets never moved")
            self.assertEqual(used[3] != used[7], apart, used)
            expect = bound if apart else 2 * bound
            self.assertAlmostEqual(fl["time_ns"] / expect, 1, delta=0.015)
            self.assertEqual((fl["retransmitted"], fl["ooo_packets"]), (0, 0))
            self.assertLessEqual(fl["time_ns"], static["time_ns"] * 1.001)


if __name__ == "__main__":
    unittest.main()
