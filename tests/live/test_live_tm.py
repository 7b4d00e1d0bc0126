"""Live traffic-manager tests: network namespaces, veth pairs, af_packet ports, and a receiver
port shaped to 10 Mb/s so that queues build from what two senders in namespaces can push.

- incast on the lossless TC 3: ECN marks follow REFERENCE §3 with Kmin = Kmax (mark iff the queue
  holds more than Kmin bytes): while the queue drains, exactly the packets leaving with fewer than
  Kmin/S frames behind them are unmarked; PFC XOFF (time = pause quanta) then XON (time 0) appear
  on both senders' links; no packet is lost.
- a PFC frame sent into the switch holds TC 3 for time x 512 bit times at 10 Mb/s, while TC 1
  passes at once.
- under bulk load on TC 3, clear-to-send packets (DSCP 48, TC 6 STRICT) overtake the backlog.
Every run ends with received = transmitted + dropped + consumed + queued."""
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.contrib.mac_control import MACControlClassBasedFlowControl  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import DATAPLANE, tmpdir, tshark_fields, write_pcap  # noqa: E402
from labnet import Lab, wait_for_line  # noqa: E402

ROUTER = "02:00:00:00:01:00"
MACS = {"h0": "02:00:00:00:10:01", "h1": "02:00:00:00:10:03", "r0": "02:00:00:00:10:05"}
IPS = {"h0": "10.1.0.1", "h1": "10.1.0.3", "r0": "10.1.0.5"}
KMIN = 30000
PAUSE_QUANTA = 0xFFFF
RX_SPEED = 10  # Mb/s

CONFIG = f"""
DEVICE_METADATA:
  localhost: {{hostname: live-tm, mac: "{ROUTER}"}}
PORT:
  Ethernet0:  {{speed: 1000, role: host, devargs: "net_af_packet0,iface=rswt-h0"}}
  Ethernet8:  {{speed: 1000, role: host, devargs: "net_af_packet1,iface=rswt-h1"}}
  Ethernet16: {{speed: {RX_SPEED}, role: host, devargs: "net_af_packet2,iface=rswt-r0"}}
PORT_QOS_MAP:
  Ethernet0:  {{pfc_enable: "3", pfc_pause_time: {PAUSE_QUANTA}}}
  Ethernet8:  {{pfc_enable: "3", pfc_pause_time: {PAUSE_QUANTA}}}
  Ethernet16: {{pfc_enable: "3"}}
BUFFER_PROFILE:
  pg_lossless_test: {{pool: ingress_lossless_pool, size: 610000, static_th: 20000,
                     xoff: 600000, xon: 10000, xon_offset: 10000}}
BUFFER_PG:
  "Ethernet0|3": {{profile: pg_lossless_test}}
  "Ethernet8|3": {{profile: pg_lossless_test}}
WRED_PROFILE:
  test_ecn: {{ecn: ecn_all, green_min_threshold: {KMIN}, green_max_threshold: {KMIN},
             green_drop_probability: 100}}
QUEUE:
  "Ethernet16|3": {{wred_profile: test_ecn}}
NEIGH:
  "Ethernet0|{IPS['h0']}":  {{neigh: "{MACS['h0']}"}}
  "Ethernet8|{IPS['h1']}":  {{neigh: "{MACS['h1']}"}}
  "Ethernet16|{IPS['r0']}": {{neigh: "{MACS['r0']}"}}
STATIC_ROUTE:
  "{IPS['r0']}/32": {{nexthop: "{IPS['r0']}"}}
"""


def data(src, n, dscp, payload=1024, qp=0x100, ecn=2):
    return [rocepkt.roce(src=IPS[src], dst=IPS["r0"], dqp=qp, psn=k, dscp=dscp, ecn=ecn,
                         smac=MACS[src], dmac=ROUTER, payload=bytes(payload)) for k in range(n)]


class LiveTm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("the live tests need root (network namespaces); CI runs as root")
        cls.dir = tmpdir()

    def run_lab(self, name, steps, captures, settle=1.5, rx_speed=RX_SPEED, lcores=("-l", "0-1"),
                extra_config=""):
        """steps: list of (senders, pause after), senders a list of (namespace key, frames[,
        delay[, gap]]) sent from parallel processes that start together (plus delay seconds),
        gap seconds between frames. captures: namespace key → tcpdump filter. Returns the
        capture paths and the switch's counters."""
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG.replace(f"speed: {RX_SPEED}, role", f"speed: {rx_speed}, role") +
                    extra_config)
        lab = Lab("rswt")
        try:
            ns = {h: lab.host(h, f"rswt-{h}", MACS[h]) for h in ("h0", "h1", "r0")}
            stats = os.path.join(d, "stats.json")
            dp = lab.start([DATAPLANE, "--no-huge", "-m", "1024", "--no-pci", *lcores,
                            "--no-shconf", "--file-prefix", "rswtm", "--log-level", "error",
                            "--", "--config", cfg, "--stats-json", stats],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding")
            caps = {}
            for h, bpf in captures.items():
                caps[h] = os.path.join(d, f"{h}.pcap")
                lab.capture(ns[h], caps[h], bpf)
            for i, (senders, after) in enumerate(steps):
                procs = []
                start = time.time() + 1.5  # python and scapy load before the common start
                for j, (h, frames, *opt) in enumerate(senders):
                    path = write_pcap(os.path.join(d, f"send{i}-{j}.pcap"), frames)
                    at = start + (opt[0] if opt else 0)
                    gap = opt[1] if len(opt) > 1 else 0
                    procs.append(subprocess.Popen(
                        ["ip", "netns", "exec", ns[h], "/usr/bin/python3",
                         os.path.join(HERE, "send_raw.py"), path, str(gap), str(at)],
                        stderr=subprocess.PIPE,
                        text=True))
                for p in procs:
                    _, err = p.communicate()
                    self.assertEqual(p.returncode, 0, err)
                time.sleep(after)
            time.sleep(settle)
            for p in lab.procs[1:]:
                Lab.stop(p)
            rc = Lab.stop(dp)
            out, self.dp_log = dp.stdout.read(), dp.stderr.read()
            self.assertEqual(rc, 0, f"dataplane exit {rc}: {out} {self.dp_log}")
            with open(stats) as f:
                counters = json.load(f)
            cons = counters["conservation"]
            self.assertTrue(cons["holds"], cons)
            return caps, counters
        finally:
            lab.close()

    def test_incast_ecn_and_pfc(self):
        n = 300
        frames = {h: data(h, n, dscp=3) for h in ("h0", "h1")}
        size = len(bytes(frames["h0"][0]))
        caps, counters = self.run_lab(
            "incast", [([("h0", frames["h0"]), ("h1", frames["h1"])], 0)],
            {"r0": "udp port 4791", "h0": "ether proto 0x8808", "h1": "ether proto 0x8808"},
            settle=2 * n * (size + 24) * 8 / (RX_SPEED * 1e6) + 1.5)
        # lossless: every packet arrives, none dropped
        got = rdpcap(caps["r0"])
        self.assertEqual(len(got), 2 * n)
        # the port drains at its speed, counting FCS, preamble and inter-frame gap:
        # (2n - 1) frames of (size + 24) bytes at 10 Mb/s between the first and last departure
        span = float(got[-1].time - got[0].time)
        want = (2 * n - 1) * (size + 24) * 8 / (RX_SPEED * 1e6)
        self.assertAlmostEqual(span, want, delta=want * 0.03)
        self.assertEqual(sum(counters["drops"].values()), 0, counters["drops"])
        # ECN: the tail leaves with j frames queued (itself included); marked iff j*size > KMIN
        ecn = [int(t["ip.dsfield.ecn"]) for t in tshark_fields(caps["r0"], ["ip.dsfield.ecn"])]
        unmarked_tail = KMIN // size
        # (the head may be marked too: a whole RX burst can arrive before the first departure)
        self.assertEqual(ecn[-unmarked_tail:], [2] * unmarked_tail)
        self.assertEqual(ecn[-unmarked_tail - 1], 3, "one more frame queued: above Kmin")
        first_mark = ecn.index(3)
        self.assertTrue(all(e == 3 for e in ecn[first_mark:-unmarked_tail]))
        self.assertGreater(len(ecn) - unmarked_tail - first_mark, n, "most of the backlog marked")
        r0 = {p["name"]: p for p in counters["ports"]}["Ethernet16"]
        q3 = r0["queues"][3]
        self.assertEqual(q3["SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"], ecn.count(3))
        # PFC on both senders' links: XOFF with the pause quanta first, XON (time 0) last
        for h, port in (("h0", "Ethernet0"), ("h1", "Ethernet8")):
            rows = tshark_fields(caps[h], ["macc.cbfc.enbv", "macc.cbfc.pause_time.c3"])
            self.assertGreaterEqual(len(rows), 2, f"{h}: PFC frames {rows}")
            self.assertEqual([int(r["macc.cbfc.enbv"], 0) for r in rows], [0x08] * len(rows))
            self.assertEqual(int(rows[0]["macc.cbfc.pause_time.c3"]), PAUSE_QUANTA)
            self.assertEqual(int(rows[-1]["macc.cbfc.pause_time.c3"]), 0)
            pfc = {p["name"]: p for p in counters["ports"]}[port]["pfc"]
            self.assertEqual(pfc["SAI_PORT_STAT_PFC_3_TX_PKTS"], len(rows))

    def test_pfc_received_pauses_queue(self):
        quanta = 40000
        pause_s = quanta * 512 / (RX_SPEED * 1e6)  # 2.048 s at 10 Mb/s
        pfc = Ether(src=MACS["r0"], dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(
            c3_enabled=1, c3_pause_time=quanta)
        lossless = data("h0", 5, dscp=3, payload=256)
        lossy = data("h0", 1, dscp=0, payload=256, qp=0x200)
        caps, counters = self.run_lab(
            "honour", [([("r0", [pfc])], 0), ([("h0", lossless + lossy)], 0)],
            {"r0": "udp port 4791 or ether proto 0x8808", "h0": "udp port 4791"},
            settle=pause_s + 1.0)
        fields = ["frame.time_epoch", "eth.type", "ip.dsfield.dscp"]
        rows = tshark_fields(caps["r0"], fields)
        sent = tshark_fields(caps["h0"], fields)
        t_pfc = [float(r["frame.time_epoch"]) for r in rows if r["eth.type"] == "0x8808"][0]

        def times(rs, dscp):
            return [float(r["frame.time_epoch"]) for r in rs if r["ip.dsfield.dscp"] == dscp]
        t3, t0 = times(rows, "3"), times(rows, "0")
        self.assertEqual((len(t3), len(t0)), (5, 1))
        self.assertLess(max(times(sent, "3")), t_pfc + pause_s, "sent while the pause holds")
        self.assertLess(t0[0] - times(sent, "0")[0], 0.05, "TC 1 is not paused")
        self.assertGreaterEqual(min(t3) - t_pfc, pause_s - 0.005, "TC 3 held for the pause")
        self.assertLess(min(t3) - t_pfc, pause_s + 0.25, "and released when it runs out")
        port = {p["name"]: p for p in counters["ports"]}["Ethernet16"]["pfc"]
        self.assertEqual(port["SAI_PORT_STAT_PFC_3_RX_PKTS"], 1)
        self.assertAlmostEqual(port["SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US"], pause_s * 1e6,
                               delta=1)

    def test_cts_overtakes_bulk(self):
        speed = 1  # Mb/s: 200 bulk frames take ~1.8 s to leave
        bulk = data("h0", 200, dscp=3, payload=1024)
        cts = data("h1", 5, dscp=48, payload=16, qp=0x300)
        frame_s = (len(bytes(bulk[0])) + 24) * 8 / (speed * 1e6)
        caps, _ = self.run_lab(
            "cts", [([("h0", bulk), ("h1", cts, 0.3)], 0)],
            {"r0": "udp port 4791", "h1": "udp port 4791"},
            settle=200 * frame_s + 1.0, rx_speed=speed)
        fields = ["frame.time_epoch", "ip.dsfield.dscp"]
        got = tshark_fields(caps["r0"], fields)
        dscps = [r["ip.dsfield.dscp"] for r in got]
        self.assertEqual((dscps.count("48"), dscps.count("3")), (5, 200))
        sent = [float(r["frame.time_epoch"]) for r in tshark_fields(caps["h1"], fields)]
        recv = [float(r["frame.time_epoch"]) for r in got if r["ip.dsfield.dscp"] == "48"]
        last_cts = max(i for i, d in enumerate(dscps) if d == "48")
        # bulk was still queued behind them ...
        self.assertGreater(dscps[last_cts:].count("3"), 20, dscps)
        # ... yet each CTS left within the frame on the wire plus its own time (strict priority)
        for s_, r_ in zip(sent, recv):
            self.assertLess(r_ - s_, 2 * frame_s + 0.01, (s_, r_))


    def test_watchdog_storm(self):
        """A receiver that keeps sending PFC for priority 3 (every 20 ms for 1 s) holds TC 3: the
        watchdog (detection 200 ms, restoration 200 ms, polled every 50 ms, action drop) logs the
        storm, flushes and drops TC 3 packets while it lasts, and logs the restoration once the PFC
        frames stop; afterwards TC 3 flows again."""
        wd = """PFC_WD:
  GLOBAL: {POLL_INTERVAL: 50}
  Ethernet16: {action: drop, detection_time: 200, restoration_time: 200}
"""
        pfc = Ether(src=MACS["r0"], dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(
            c3_enabled=1, c3_pause_time=0xFFFF)
        stuck = data("h0", 10, dscp=3, payload=256)
        during = data("h0", 10, dscp=3, payload=256, qp=0x200)
        after = data("h0", 10, dscp=3, payload=256, qp=0x300)
        caps, counters = self.run_lab(
            "watchdog", [([("r0", [pfc] * 50, 0.0, 0.02), ("h0", stuck, 0.1),
                          ("h0", during, 0.6), ("h0", after, 2.0)], 0)],
            {"r0": "udp port 4791"}, settle=1.0, extra_config=wd)
        self.assertIn("pfcwd: storm detected on Ethernet16 queue 3, action drop", self.dp_log)
        self.assertIn("pfcwd: storm restored on Ethernet16 queue 3", self.dp_log)
        qps = [int(r["infiniband.bth.destqp"], 16)
               for r in tshark_fields(caps["r0"], ["infiniband.bth.destqp"])]
        self.assertEqual(qps.count(0x100), 0, "queued during the storm: flushed")
        self.assertEqual(qps.count(0x200), 0, "sent during the storm: dropped")
        self.assertEqual(qps.count(0x300), 10, "after restoration: forwarded")
        self.assertEqual(counters["drops"]["pfcwd_drop"], 20)
        q3 = {p["name"]: p for p in counters["ports"]}["Ethernet16"]["queues"][3]
        self.assertEqual(q3["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"], 1)
        self.assertEqual(q3["PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"], 1)
        self.assertEqual(q3["PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS"], 20)

    def test_two_workers_one_egress_port(self):
        """Ports are dealt to workers round-robin: with two workers, h0's and h1's ports belong
        to different ones, and both feed r0's VOQs (multi-producer rings, atomic counters). Every
        frame arrives exactly once and in order per sender; nothing is unaccounted for."""
        n = 400
        frames = {h: data(h, n, dscp=3, payload=512) for h in ("h0", "h1")}
        size = len(bytes(frames["h0"][0]))
        caps, counters = self.run_lab(
            "two-workers", [([("h0", frames["h0"]), ("h1", frames["h1"])], 0)],
            {"r0": "udp port 4791"}, lcores=("--lcores", "0@0,1@1,2@1"),  # 2 workers, 2 CPUs
            settle=2 * n * (size + 24) * 8 / (RX_SPEED * 1e6) + 2.0)
        rows = tshark_fields(caps["r0"], ["ip.src", "infiniband.bth.psn"])
        seen = {}
        for r in rows:
            seen.setdefault(r["ip.src"], []).append(int(r["infiniband.bth.psn"]))
        for h in ("h0", "h1"):
            self.assertEqual(seen.get(IPS[h]), list(range(n)), f"{h}: each PSN once, in order")
        self.assertEqual(sum(counters["drops"].values()), 0, counters["drops"])
        r0 = {p["name"]: p for p in counters["ports"]}["Ethernet16"]
        self.assertEqual(r0["tx_packets"], 2 * n)


if __name__ == "__main__":
    unittest.main(verbosity=1)
