"""Live: ARS sprays one QP per packet over two paths of different lengths, and `rocesw send
--receive` on the receiving host counts the reordering an RC receiver sees (docs/ars.md
"Receivers", docs/lab.md). A zone run by `rocesw-dataplane --zone`: h0 on sw1, h1 on sw2, sw1
and sw2 joined by a 3 m and a 100 km in-memory link (15 ns and 500 us of propagation); sw1's
group to h1 sprays RoCE per packet at random (ARS per_packet_random). `rocesw send` sends one
QP's PSNs 0..N-1 from h0 at 20000 frames/s (50 us apart), so a packet put on the long link
arrives about ten PSNs late.

The receiver's counts (out-of-order packets, largest PSN distance, most packets and bytes held
past a gap) must be those of the PSN order tcpdump saw on h1's interface, read with tshark and
counted here by the responder model of tests/py/test_ars_loop.py. Every PSN arrives exactly
once, sw1's ARS decided every frame and moved the QP between members, the switches dropped
nothing, and the zone's counters balance. Waits are on the receiver's count, the capture and
the control socket, never on the wall clock."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import (ROCESW, dataplane_cmd, require_root, tmpdir, tshark_fields,  # noqa: E402
                    write_pcap)
from labnet import Control, Lab, wait_captured, wait_for_line, wait_until  # noqa: E402
from test_ars_loop import placed  # noqa: E402

N = 300
QP = 0x100
PAYLOAD = 256
ROUTER = "02:00:00:00:01:00"
HOSTS = {"h0": ("10.1.0.1", "02:00:00:01:00:00", "rsar-h0"),
         "h1": ("10.1.0.3", "02:00:00:01:00:01", "rsar-h1")}


def switch_yaml(n):
    """sw1 (h0) or sw2 (h1); the far host over group `up` of both links; sw1 sprays RoCE."""
    me, far = (1, 2) if n == 1 else (2, 1)
    host = HOSTS[f"h{me - 1}"]
    far_ip = HOSTS[f"h{far - 1}"][0]
    peer = [f"10.254.0.{1 - (n - 1) + 2 * k}" for k in range(2)]
    ars = ref = ""
    if n == 1:
        ars = ("ARS_PROFILE:\n  default: {random_seed: 1}\n"
               "ARS_OBJECT:\n  spray: {assign_mode: per_packet_random, match_l4_dst_port: 4791}\n")
        ref = ", ars_object: spray"
    return f"""DEVICE_METADATA:
  localhost: {{hostname: sw{n}, mac: "{ROUTER}"}}
PORT:
  Ethernet0: {{speed: 100000, role: host}}
  Ethernet8: {{speed: 100000, role: uplink, mac: "02:00:00:00:{me}1:08"}}
  Ethernet16: {{speed: 100000, role: uplink, mac: "02:00:00:00:{me}1:10"}}
NEIGH:
  "Ethernet0|{host[0]}": {{neigh: "{host[1]}"}}
  "Ethernet8|{peer[0]}": {{neigh: "02:00:00:00:{far}1:08"}}
  "Ethernet16|{peer[1]}": {{neigh: "02:00:00:00:{far}1:10"}}
{ars}NEXTHOP_GROUP:
  up: {{nexthop: "{peer[0]},{peer[1]}"{ref}}}
STATIC_ROUTE:
  "{host[0]}/32": {{nexthop: "{host[0]}"}}
  "{far_ip}/32": {{nexthop_group: up}}
"""


ZONE = f"""SWITCH:
  sw1: {{config: sw1.yaml}}
  sw2: {{config: sw2.yaml}}
HOST:
  h0: {{devargs: "net_af_packet0,iface={HOSTS['h0'][2]}"}}
  h1: {{devargs: "net_af_packet1,iface={HOSTS['h1'][2]}"}}
LINK:
  - {{a: h0, b: "sw1|Ethernet0", length: 3m}}
  - {{a: h1, b: "sw2|Ethernet0", length: 3m}}
  - {{a: "sw1|Ethernet8", b: "sw2|Ethernet8", length: 3m}}
  - {{a: "sw1|Ethernet16", b: "sw2|Ethernet16", length: 100000m}}
"""


def idle(counters):
    """Nothing queued in a switch, nothing on a link."""
    return counters["in_flight"] == 0 and all(s["conservation"]["queued"] == 0
                                              for s in counters["switches"])


def switch(counters, name):
    return next(s for s in counters["switches"] if s["name"] == name)


class LiveArsReorder(unittest.TestCase):
    def test_receiver_counts_the_reordering(self):
        require_root()
        d = tmpdir()
        for n in (1, 2):
            with open(os.path.join(d, f"sw{n}.yaml"), "w") as f:
                f.write(switch_yaml(n))
        zone = os.path.join(d, "zone.yaml")
        with open(zone, "w") as f:
            f.write(ZONE)
        frames = [rocepkt.roce(src=HOSTS["h0"][0], dst=HOSTS["h1"][0], dqp=QP, psn=k, dscp=0,
                               ecn=0, smac=HOSTS["h0"][1], dmac=ROUTER,
                               payload=bytes(PAYLOAD)) for k in range(N)]
        pcap = write_pcap(os.path.join(d, "h0.pcap"), frames)
        cap = os.path.join(d, "h1.pcap")
        sock = os.path.join(d, "ctl.sock")
        lab = Lab("rsar")
        try:
            ns = {h: lab.host(h, HOSTS[h][2], HOSTS[h][1]) for h in HOSTS}
            dp = lab.start(dataplane_cmd("rswarsreorder", "--zone", zone, "--control-socket",
                                         sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding", timeout=120)
            lab.capture(ns["h1"], cap)
            rx = lab.start([ROCESW, "send", "eth0", "--receive", "--count", str(N), "--json"],
                           ns=ns["h1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
            wait_for_line(rx.stderr, "receiving on")
            tx = subprocess.run(["ip", "netns", "exec", ns["h0"], ROCESW, "send", "eth0", pcap,
                                 "--rate", "20000", "--link-speed", "1000", "--json"],
                                capture_output=True, text=True, timeout=120)
            self.assertEqual(tx.returncode, 0, tx.stderr)
            self.assertEqual(json.loads(tx.stdout)["sent"], N)
            out, err = rx.communicate(timeout=120)
            self.assertEqual(rx.returncode, 0, err)
            got = json.loads(out)
            wait_captured(cap, N)
            ctl = Control(sock)
            c = wait_until(lambda: (lambda c: idle(c) and c)(ctl.counters()),
                           "the zone to hold no frame")
            for p in lab.procs[1:]:
                Lab.stop(p)
            self.assertEqual(Lab.stop(dp), 0)
        finally:
            lab.close()

        # the receiver: one QP, every PSN once
        self.assertEqual(got["capture_dropped"], 0)
        self.assertEqual(got["packets"], N)
        self.assertEqual(len(got["qps"]), 1, got["qps"])
        q = got["qps"][0]
        self.assertEqual((q["src"], q["dest_qp"], q["packets"]), (HOSTS["h0"][0], QP, N))
        self.assertEqual((q["duplicates"], q["expected_psn"]), (0, N), "every PSN, once")
        self.assertEqual(q["payload_bytes"], N * PAYLOAD)

        # the capture, read independently: the same order, counted by the responder model
        rows = tshark_fields(cap, ["infiniband.bth.destqp", "infiniband.bth.psn"])
        arrivals = [int(r["infiniband.bth.psn"]) for r in rows
                    if int(r["infiniband.bth.destqp"], 0) == QP]
        self.assertEqual(sorted(arrivals), list(range(N)), "no frame lost or duplicated")
        ooo, dist, most = placed(arrivals)
        self.assertGreater(ooo, 0, "the long path reordered the QP")
        self.assertEqual((q["ooo_packets"], q["ooo_max_distance"], q["reorder_max_packets"]),
                         (ooo, dist, most))
        self.assertEqual(q["reorder_max_bytes"], most * PAYLOAD)

        # the switches: ARS decided every frame on sw1 and moved the QP; nothing dropped
        sw1 = switch(c, "sw1")
        ars = next(g["ars"] for g in sw1["ecmp_groups"] if g.get("ars"))
        self.assertEqual(ars["RSW_ARS_PACKETS"], N)
        self.assertGreater(ars["SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS"], 0)
        self.assertEqual(ars["SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS"], 0)
        tx_up = {p["name"]: p["tx_packets"] for p in sw1["ports"]}
        self.assertGreater(tx_up["Ethernet8"], 0, "both paths used")
        self.assertGreater(tx_up["Ethernet16"], 0, "both paths used")
        for s in c["switches"]:
            k = s["conservation"]
            self.assertEqual(k["received"], k["transmitted"] + k["dropped"] + k["consumed"],
                             s["name"])
            self.assertEqual(k["dropped"], 0, s["name"])
            self.assertGreaterEqual(k["received"], N, s["name"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
