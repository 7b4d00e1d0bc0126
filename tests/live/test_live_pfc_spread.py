"""Live PFC spreading through a zone (issue 11): tests/configs/zone-pfc runs live in one
rocesw-dataplane (rtsw1, rtsw2, ctsw1; the switch-to-switch links in memory at 8 Mb/s). h0 (rack
1) and h1 (rack 2) each send 3000 RoCE frames of 570 bytes on the lossless priority 3 (DSCP 3)
with `rocesw send` at their 4 Mb/s link speed to r0 (rack 2), whose port drains at 1 Mb/s. So
rtsw2's PGs fill and pause h1 and ctsw1; ctsw1's PG from rtsw1 fills and pauses rtsw1 over the
in-memory link; rtsw1's PG from h0 fills and pauses h0.

The hosts' links are slow and their PGs' headroom holds a full af_packet receive ring (512
frames, 0.6 s of a host's 4 Mb/s): the zone's worker may be off its CPU that long without a
frame lost in a veth's ring, where no switch counter sees it (at 10 Mb/s with 150 kB of
headroom, 0.3 s stalls lost 63 of h1's frames there and the ignore case waited for them in
vain). Ignoring PFC, a host's PG (at most 655 kB at rtsw1, 355 kB at rtsw2) still overflows:
of a sender's 1.71 MB, r0's port drains at most 36 % while they arrive even at 70 % of the
sender's link rate, and the zone's inner PGs hold about 100 kB.

- The spreading, from the zone's counters on the control socket: in the first snapshot in which
  rtsw1 has sent XOFF to h0, ctsw1 has already sent XOFF on its link to rtsw1 (its port's
  counter and the link's own count of PFC frames in that direction) and rtsw1 has received it
  (counters only grow, and rtsw1's host PG cannot fill while its uplink runs at twice
  h0's rate: only the pause from ctsw1 fills it). On h0's veth a capture holds PFC frames
  (opcode 0x0101, class-enable bit 3, a pause time for priority 3) from rtsw1's port MAC, as
  tshark reads them.
- Honouring PFC (rocesw send's XDP program): no switch drops anything, and r0 receives every PSN
  of both senders exactly once (its capture, read by tshark).
- Ignoring PFC (--ignore-pfc): the frames lost are counted as headroom_overflow at the switches
  the hosts blast (rtsw1, rtsw2), none inside the zone (ctsw1, the in-memory links), and frames
  sent = frames r0 received + counted drops.
Waits are on counters and captures; no timing from the wall clock."""
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import ROCESW, ROOT, dataplane_cmd, require_root, tmpdir  # noqa: E402
from common import tshark_fields, write_pcap  # noqa: E402
from labnet import Control, Lab, wait_captured, wait_for_line, wait_until  # noqa: E402

ZONE = os.path.join(ROOT, "tests", "configs", "zone-pfc", "zone.yaml")
ROUTER = "02:00:00:00:01:00"  # the host ports' MAC in rtsw1.yaml and rtsw2.yaml
HOSTS = {"h0": ("02:00:00:01:00:00", "10.1.0.1", 0x100),
         "h1": ("02:00:00:01:00:01", "10.1.0.3", 0x200),
         "r0": ("02:00:00:01:00:02", "10.1.0.5", 0)}
N = 3000
HOST_SPEED = 4  # Mb/s, the senders' links in the configs


def frames(h):
    mac, ip, qp = HOSTS[h]
    return [rocepkt.roce(src=ip, dst=HOSTS["r0"][1], dqp=qp, psn=k, dscp=3, ecn=0, smac=mac,
                         dmac=ROUTER, payload=bytes(512)) for k in range(N)]


def port(c, sw, name):
    s = next(s for s in c["switches"] if s["name"] == sw)
    return next(p for p in s["ports"] if p["name"] == name)


def pfc3(c, sw, name, way):
    return port(c, sw, name)["pfc"][f"SAI_PORT_STAT_PFC_3_{way}_PKTS"]


def link(c, a, b):
    """The zone's counters of the in-memory link a - b (as the zone file names its ends)."""
    return next(x for x in c["links"] if (x["a"], x["b"]) == (a, b))


def drops(c):
    return {s["name"]: {k: v for k, v in s["drops"].items() if v} for s in c["switches"]}


class LivePfcSpread(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()

    def run_zone(self, name, send_args):
        d = os.path.join(self.dir, name)
        os.makedirs(d)
        lab = Lab("rswp")
        try:
            ns = {h: lab.host(h, f"rswp-{h}", HOSTS[h][0]) for h in HOSTS}
            sock = os.path.join(d, "ctl.sock")
            dp = lab.start(dataplane_cmd("rswpfc", "--zone", ZONE, "--control-socket", sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding", timeout=120)
            ctl = Control(sock)
            r0_cap, h0_cap = os.path.join(d, "r0.pcap"), os.path.join(d, "h0-pfc.pcap")
            lab.capture(ns["r0"], r0_cap, "udp port 4791")
            # on the switch's end of h0's veth: what rtsw1 sends h0 (qdisc_bypass=0 in the zone's
            # devargs, so af_packet's transmit passes the taps); h0's XDP program drops PFC
            # frames before a capture inside the namespace would see them
            tap = lab.start(["tcpdump", "-i", "rswp-h0", "-U", "-n", "-s", "0", "-w", h0_cap,
                             "ether proto 0x8808"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
            wait_for_line(tap.stderr, "listening on")
            senders = []
            for h in ("h0", "h1"):
                path = write_pcap(os.path.join(d, f"{h}.pcap"), frames(h))
                senders.append(lab.start(
                    [ROCESW, "send", "eth0", path, "--fast", "--link-speed", str(HOST_SPEED),
                     "--json", *send_args], ns=ns[h],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            # the zone's counters while the senders run: the first snapshot in which rtsw1 has
            # paused h0
            first = None
            while any(p.poll() is None for p in senders):
                c = ctl.counters()
                if first is None and pfc3(c, "rtsw1", "Ethernet0", "TX") > 0:
                    first = c
                time.sleep(0.01)  # leaves the main lcore to its other work; no timing
            reports = []
            for p in senders:
                out, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
                reports.append(json.loads(out))

            def settled():
                c = ctl.counters()
                gone = port(c, "rtsw2", "Ethernet8")["tx_packets"]
                lost = sum(sum(v.values()) for v in drops(c).values())
                held = sum(s["conservation"]["queued"] for s in c["switches"]) + c["in_flight"]
                return gone + lost >= 2 * N and held == 0 and c
            try:
                c = wait_until(settled, "every frame delivered to r0 or dropped")
            except AssertionError as e:
                # what the zone holds, so that a frame lost where no counter sees it (a host
                # veth's receive ring before the switch reads it) is told from one still held
                c = ctl.counters()
                hosts = {f"{s}|{p}": (port(c, s, p)["rx_packets"],
                                      port(c, s, p).get("port_rx_missed"))
                         for s, p in (("rtsw1", "Ethernet0"), ("rtsw2", "Ethernet0"))}
                raise AssertionError(
                    f"{e}: sent {2 * N}, r0 got {port(c, 'rtsw2', 'Ethernet8')['tx_packets']}, "
                    f"drops {drops(c)}, host ports (rx, rx_missed) {hosts}, queued "
                    f"{[s['conservation']['queued'] for s in c['switches']]}, in flight "
                    f"{c['in_flight']}") from None
            if first is None:
                first = c
            wait_captured(r0_cap, port(c, "rtsw2", "Ethernet8")["tx_packets"])
            for p in lab.procs[1:]:
                Lab.stop(p)
            self.assertEqual(Lab.stop(dp), 0, dp.stderr.read())
            seen = {}
            for r in tshark_fields(r0_cap, ["ip.src", "infiniband.bth.psn"]):
                seen.setdefault(r["ip.src"], []).append(int(r["infiniband.bth.psn"]))
            pfc = tshark_fields(h0_cap, ["eth.src", "macc.opcode", "macc.cbfc.enbv",
                                         "macc.cbfc.pause_time.c3"])
            return reports, first, c, seen, pfc
        finally:
            lab.close()

    def spread(self, first, c, pfc):
        # rtsw1 paused h0 only after ctsw1 paused rtsw1 over the in-memory link
        self.assertGreater(pfc3(first, "rtsw1", "Ethernet0", "TX"), 0)
        self.assertGreater(pfc3(first, "ctsw1", "Ethernet0", "TX"), 0,
                           "ctsw1 paused rtsw1 before rtsw1 paused h0")
        self.assertGreater(pfc3(first, "rtsw1", "Ethernet256", "RX"), 0,
                           "the XOFF crossed the link to rtsw1 first")
        self.assertGreater(link(first, "rtsw1|Ethernet256", "ctsw1|Ethernet0")["b_to_a"]
                           ["pfc_frames"], 0, "on the CTSW->RTSW direction of the link")
        # and rtsw2 paused ctsw1 (the start of the chain)
        self.assertGreater(pfc3(c, "rtsw2", "Ethernet256", "TX"), 0)
        self.assertGreater(pfc3(c, "ctsw1", "Ethernet8", "RX"), 0)
        # what crossed each link (the link's own count) is what its ends counted
        for a, b, sender, receiver in (("rtsw1|Ethernet256", "ctsw1|Ethernet0", "ctsw1|Ethernet0",
                                        "rtsw1|Ethernet256"),
                                       ("rtsw2|Ethernet256", "ctsw1|Ethernet8", "rtsw2|Ethernet256",
                                        "ctsw1|Ethernet8")):
            way = "b_to_a" if sender == b else "a_to_b"
            on_link = link(c, a, b)[way]["pfc_frames"]
            self.assertEqual(pfc3(c, *sender.split("|"), "TX"), on_link, sender)
            self.assertEqual(pfc3(c, *receiver.split("|"), "RX"), on_link, receiver)
        # on h0's veth: XOFF for priority 3 from rtsw1's port, as tshark reads it
        xoff = [r for r in pfc if int(r["macc.opcode"], 0) == 0x0101 and
                int(r["macc.cbfc.enbv"], 0) & 0x08 and int(r["macc.cbfc.pause_time.c3"]) > 0]
        self.assertGreater(len(xoff), 0, "XOFF for priority 3 on h0's veth")
        self.assertEqual({r["eth.src"] for r in xoff}, {ROUTER})
        self.assertEqual(len(pfc), pfc3(c, "rtsw1", "Ethernet0", "TX"),
                         "every PFC frame rtsw1 counted is on the veth")

    def test_honour_pfc_lossless(self):
        reports, first, c, seen, pfc = self.run_zone("honour", [])
        self.spread(first, c, pfc)
        self.assertEqual(drops(c), {"rtsw1": {}, "rtsw2": {}, "ctsw1": {}},
                         "no switch dropped anything")
        for h in ("h0", "h1"):
            self.assertEqual(seen.get(HOSTS[h][1]), list(range(N)), f"{h}: each PSN once, in order")
        for rep in reports:
            self.assertEqual(rep["sent"], N)
            self.assertTrue(rep["honour_pfc"])
            self.assertGreater(rep["priorities"][3]["xoff_rx"], 0)
            self.assertGreater(rep["priorities"][3]["paused_us"], 0, "the sender held frames")

    def test_ignore_pfc_drops_counted(self):
        reports, first, c, seen, pfc = self.run_zone("ignore", ["--ignore-pfc"])
        self.spread(first, c, pfc)
        lost = drops(c)
        self.assertEqual(lost["ctsw1"], {}, "nothing lost inside the zone")
        self.assertEqual({k for v in lost.values() for k in v}, {"headroom_overflow"}, lost)
        for s in ("rtsw1", "rtsw2"):
            self.assertGreater(lost[s].get("headroom_overflow", 0), 0, f"{s}: its host overflowed")
        for s in c["switches"]:
            self.assertEqual(s["conservation"]["lossless_drops"],
                             {k: v for k, v in s["drops"].items() if v}, s["name"])
        got = sum(len(v) for v in seen.values())
        dropped = sum(v["headroom_overflow"] for v in lost.values() if v)
        self.assertEqual(sum(r["sent"] for r in reports), 2 * N)
        self.assertEqual(got + dropped, 2 * N, "sent = received by r0 + counted drops")
        for h in ("h0", "h1"):
            psns = seen.get(HOSTS[h][1], [])
            self.assertEqual(psns, sorted(set(psns)), f"{h}: no PSN twice")
        for rep in reports:
            self.assertFalse(rep["honour_pfc"])
            self.assertEqual(rep["priorities"][3]["paused_us"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
