"""Live: `rocesw send` as the lab's hosts. Two hosts blast one receiver through the switch on the
lossless priority 3 (DSCP 3); the senders' links run at 4 Mb/s and the receiver's port is shaped
to 1 Mb/s, so the incast has to be paused.
- honouring PFC (the default): the switch drops nothing, every PSN of both senders reaches the
  receiver exactly once and in order (read from a capture on its veth), and each sender's XDP
  program saw XOFF for priority 3 and held frames;
- with --ignore-pfc the same traffic overflows the headroom: the drops are counted with their
  reason headroom_overflow in `rocesw show counters`, and the receiver misses exactly those
  frames.
Frame counts are read from the switch's control socket, never from the wall clock.

A veth host link stores frames the switch has not read yet: af_packet's receive ring (512
frames) fills while the switch's worker is off its CPU and the sender is not, and the switch
sends XOFF only for frames it has read. So each sender's PG has the headroom of a full ring
plus what the sender has in flight, and the senders are slow enough that filling the ring
takes 0.6 s: the worker may be off its CPU that long without a loss (at 20 Mb/s, with a 150 kB
headroom, a machine busy with a million-route build lost 71 frames in the ring and overflowed
the headroom by 229). Past that, frames are lost in the kernel where no switch counter sees
them, and the test fails on the missing PSNs.

Each sender sends 1200 frames of 570 bytes (684 kB); a PG holds at most 355 kB (20 kB reserved
+ 20 kB shared + 315 kB headroom). Even if the two senders ran one after the other, each at
2.8 Mb/s (70 % of its link), the receiver's port would drain only 36 % of a sender's frames
while they arrive, leaving 438 kB: ignoring PFC always overflows."""
import json
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import (ROCESW, dataplane_cmd, require_root, tmpdir,  # noqa: E402
                    tshark_fields, write_pcap)
from labnet import Lab, captured, wait_for_line  # noqa: E402

ROUTER = "02:00:00:00:01:00"
MACS = {"h0": "02:00:00:00:10:01", "h1": "02:00:00:00:10:03", "r0": "02:00:00:00:10:05"}
IPS = {"h0": "10.1.0.1", "h1": "10.1.0.3", "r0": "10.1.0.5"}
N = 1200           # frames per sender
HOST_SPEED = 4     # Mb/s: the senders' links (rocesw send paces at it; pause quanta count in it)
RX_SPEED = 1       # Mb/s: the receiver's port drains the incast slowly

# headroom: af_packet's receive ring (512 frames), rocesw send's frames in flight (32) and a
# late wake-up's burst (8), of 570 bytes each (the buffer counts a frame's length)
XOFF = (512 + 32 + 8) * 570

CONFIG = f"""
DEVICE_METADATA:
  localhost: {{hostname: live-send, mac: "{ROUTER}"}}
PORT:
  Ethernet0:  {{speed: {HOST_SPEED}, role: host, devargs: "net_af_packet0,iface=rsws-h0"}}
  Ethernet8:  {{speed: {HOST_SPEED}, role: host, devargs: "net_af_packet1,iface=rsws-h1"}}
  Ethernet16: {{speed: {RX_SPEED}, role: host, devargs: "net_af_packet2,iface=rsws-r0"}}
PORT_QOS_MAP:
  Ethernet0:  {{pfc_enable: "3"}}
  Ethernet8:  {{pfc_enable: "3"}}
  Ethernet16: {{pfc_enable: "3"}}
BUFFER_PROFILE:
  pg_lossless_small: {{pool: ingress_lossless_pool, size: {20000 + XOFF}, static_th: 20000,
                      xoff: {XOFF}, xon: 10000, xon_offset: 10000}}
BUFFER_PG:
  "Ethernet0|3": {{profile: pg_lossless_small}}
  "Ethernet8|3": {{profile: pg_lossless_small}}
NEIGH:
  "Ethernet0|{IPS['h0']}":  {{neigh: "{MACS['h0']}"}}
  "Ethernet8|{IPS['h1']}":  {{neigh: "{MACS['h1']}"}}
  "Ethernet16|{IPS['r0']}": {{neigh: "{MACS['r0']}"}}
STATIC_ROUTE:
  "{IPS['r0']}/32": {{nexthop: "{IPS['r0']}"}}
"""


def data(src, qp):
    return [rocepkt.roce(src=IPS[src], dst=IPS["r0"], dqp=qp, psn=k, dscp=3, ecn=0,
                         smac=MACS[src], dmac=ROUTER, payload=bytes(512)) for k in range(N)]


class LiveSend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()

    def run_lab(self, name, send_args):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG)
        lab = Lab("rsws")
        try:
            ns = {h: lab.host(h, f"rsws-{h}", MACS[h]) for h in ("h0", "h1", "r0")}
            sock = os.path.join(d, "ctl.sock")
            dp = lab.start(dataplane_cmd("rswsend", "--config", cfg, "--control-socket", sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding")
            cap = os.path.join(d, "r0.pcap")
            lab.capture(ns["r0"], cap, "udp port 4791")
            senders = []
            for h, qp in (("h0", 0x100), ("h1", 0x200)):
                path = write_pcap(os.path.join(d, f"{h}.pcap"), data(h, qp))
                senders.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns[h], ROCESW, "send", "eth0", path, "--fast",
                     "--link-speed", str(HOST_SPEED), "--json", *send_args],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            reports = []
            for p in senders:
                out, err = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 0, err)
                reports.append(json.loads(out))

            def counters():
                r = subprocess.run([ROCESW, "show", "counters", "--json", "--socket", sock],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                return json.loads(r.stdout)
            # every frame the senders handed over is received by the switch, then transmitted
            # or dropped; the receiver's port drains at 1 Mb/s, so wait on the counters
            deadline = time.time() + 60
            while True:
                c = counters()
                cons = c["conservation"]
                if cons["received"] >= 2 * N and cons["queued"] == 0:
                    break
                self.assertLess(time.time(), deadline, cons)
                time.sleep(0.2)
            tx = {p["name"]: p for p in c["ports"]}["Ethernet16"]["tx_packets"]
            while captured(cap) < tx and time.time() < deadline:
                time.sleep(0.1)
            for p in lab.procs[1:]:
                Lab.stop(p)
            self.assertEqual(Lab.stop(dp), 0)
            rows = tshark_fields(cap, ["ip.src", "infiniband.bth.psn"])
            seen = {}
            for r in rows:
                seen.setdefault(r["ip.src"], []).append(int(r["infiniband.bth.psn"]))
            return reports, c, seen
        finally:
            lab.close()

    def test_honour_pfc_lossless(self):
        reports, c, seen = self.run_lab("honour", [])
        drops = {k: v for k, v in c["drops"].items() if v}
        self.assertEqual(drops, {}, "the switch dropped nothing")
        for h in ("h0", "h1"):
            self.assertEqual(seen.get(IPS[h]), list(range(N)), f"{h}: each PSN once, in order")
        for rep in reports:
            self.assertEqual(rep["sent"], N)
            self.assertTrue(rep["honour_pfc"])
            p3 = rep["priorities"][3]
            self.assertEqual(p3["sent"], N, "DSCP 3 is priority 3 (AZURE map)")
            self.assertGreater(p3["xoff_rx"], 0, "the switch paused priority 3")
            self.assertGreater(p3["paused_us"], 0, "and the sender held it")
            self.assertEqual(rep["mac_control_dropped"], sum(q["pfc_rx"] for q in
                                                             rep["priorities"]))
        pfc = {p["name"]: p["pfc"] for p in c["ports"]}
        for port in ("Ethernet0", "Ethernet8"):
            self.assertGreater(pfc[port]["SAI_PORT_STAT_PFC_3_TX_PKTS"], 0)

    def test_ignore_pfc_drops_counted(self):
        reports, c, seen = self.run_lab("ignore", ["--ignore-pfc"])
        drops = {k: v for k, v in c["drops"].items() if v}
        self.assertEqual(list(drops), ["headroom_overflow"], drops)
        got = sum(len(v) for v in seen.values())
        self.assertEqual(got + drops["headroom_overflow"], 2 * N, "a frame is either "
                         "delivered or counted as dropped")
        for h in ("h0", "h1"):
            psns = seen.get(IPS[h], [])
            self.assertEqual(psns, sorted(set(psns)), f"{h}: no PSN twice")
        for rep in reports:
            self.assertEqual(rep["sent"], N)
            self.assertFalse(rep["honour_pfc"])
            self.assertGreater(rep["priorities"][3]["xoff_rx"], 0, "XOFF came and was ignored")
            self.assertEqual(rep["priorities"][3]["paused_us"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
