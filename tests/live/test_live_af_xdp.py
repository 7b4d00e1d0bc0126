"""Live: host ports on net_af_xdp as well as net_af_packet, with the project's default MTU (9100
in the config). DPDK 22.11's af_xdp lays its UMEM over the RX mempool and the kernel refuses
UMEM chunks larger than a page, so the switch gives af_xdp ports a page-sized pool (docs/
dataplane.md):
- both drivers forward RoCEv2 frames of several sizes up to the veth's MTU, each PSN once, TTL
  decremented, MACs rewritten (read back with tshark on the receiver's veth);
- a jumbo frame from an af_packet port to an af_xdp port is dropped with reason tx_too_big
  (af_xdp would copy it into a page-sized buffer without a length check) and smaller ones pass;
- an af_xdp port on an interface whose MTU needs more than a page is refused with a message
  that says which MTU works."""
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
from labnet import Lab, captured, sh, wait_for_line  # noqa: E402

ROUTER = "02:00:00:00:01:00"
MACS = {"h0": "02:00:00:00:10:01", "h1": "02:00:00:00:10:03"}
IPS = {"h0": "10.1.0.1", "h1": "10.1.0.3"}
# af_xdp frames live in one 4 KiB page with 576 bytes of headers and headroom in front
# (mempool object header 64, rte_mbuf 128, RTE_PKTMBUF_HEADROOM 128, XDP_PACKET_HEADROOM 256)
# minus the mempool's rounding: 3456 bytes is what the switch reports; an MTU of
# 3456 - 14 (Ethernet) - 4 (one VLAN tag) = 3438 fits.
XDP_MTU = 3438


def config(drivers, mtu_field=""):
    ports = "\n".join(
        f'  Ethernet{8 * i}: {{speed: 10000, role: host, {mtu_field}'
        f'devargs: "{drv.split(",")[0]}{i},iface=rswx-{h}{drv[len(drv.split(",")[0]):]}"}}'
        for i, (h, drv) in enumerate(drivers))
    return f"""DEVICE_METADATA:
  localhost: {{hostname: live-xdp, mac: "{ROUTER}"}}
PORT:
{ports}
NEIGH:
  "Ethernet0|{IPS['h0']}": {{neigh: "{MACS['h0']}"}}
  "Ethernet8|{IPS['h1']}": {{neigh: "{MACS['h1']}"}}
STATIC_ROUTE:
  "{IPS['h1']}/32": {{nexthop: "{IPS['h1']}"}}
"""


def frames(sizes):
    return [rocepkt.roce(src=IPS["h0"], dst=IPS["h1"], dqp=0x100, psn=k, ttl=64,
                         smac=MACS["h0"], dmac=ROUTER, payload=bytes(n))
            for k, n in enumerate(sizes)]


class LiveAfXdp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()

    def run_lab(self, name, drivers, sent, mtus):
        """drivers: (h0's, h1's); mtus: veth MTU per host. Returns (rows of h1's capture,
        counters, dataplane stderr) or raises with the dataplane's error."""
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(config(list(zip(("h0", "h1"), drivers))))
        lab = Lab("rswx")
        try:
            ns = {}
            for h in ("h0", "h1"):
                ns[h] = lab.host(h, f"rswx-{h}", MACS[h])
                sh("ip", "link", "set", f"rswx-{h}", "mtu", str(mtus[h]))
                sh("ip", "link", "set", "eth0", "mtu", str(mtus[h]), ns=ns[h])
            stats = os.path.join(d, "stats.json")
            sock = os.path.join(d, "ctl.sock")
            dp = lab.start(dataplane_cmd("rswxdp", "--config", cfg, "--stats-json", stats,
                                         "--control-socket", sock),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            cap = os.path.join(d, "h1.pcap")
            try:
                head = wait_for_line(dp.stderr, "forwarding", timeout=30)
            except AssertionError as e:
                dp.wait(30)
                return None, None, str(e) + dp.stderr.read(), dp.returncode
            lab.capture(ns["h1"], cap, "udp port 4791")
            path = write_pcap(os.path.join(d, "sent.pcap"), sent)
            r = subprocess.run(["ip", "netns", "exec", ns["h0"], "/usr/bin/python3",
                                os.path.join(HERE, "send_raw.py"), path, "0.002"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            # every frame the host sent is either transmitted or dropped by the switch
            deadline = time.time() + 20
            while time.time() < deadline:
                c = json.loads(subprocess.run([ROCESW, "show", "counters", "--json", "--socket",
                                               sock], capture_output=True, text=True).stdout)
                cons = c["conservation"]
                rx = {p["name"]: p for p in c["ports"]}["Ethernet0"]["rx_packets"]
                if rx >= len(sent) and cons["queued"] == 0:
                    break
                time.sleep(0.1)
            # tcpdump hands packets over a ring block at a time: wait until it wrote them all
            while time.time() < deadline and captured(cap) < c["conservation"]["transmitted"]:
                time.sleep(0.1)
            for p in lab.procs[1:]:
                Lab.stop(p)
            rc = Lab.stop(dp)
            err = head + dp.stderr.read()
            self.assertEqual(rc, 0, err)
            with open(stats) as f:
                counters = json.load(f)
            self.assertTrue(counters["conservation"]["holds"], counters["conservation"])
            rows = tshark_fields(cap, ["frame.len", "infiniband.bth.psn", "ip.ttl", "eth.src",
                                       "eth.dst"])
            return rows, counters, err, rc
        finally:
            lab.close()

    def check_forwarded(self, drivers, mtus, sizes):
        sent = frames(sizes)
        rows, counters, err, rc = self.run_lab("-".join(drivers), drivers, sent, mtus)
        self.assertIsNotNone(rows, f"the dataplane did not start ({rc}): {err}")
        self.assertEqual([int(r["infiniband.bth.psn"]) for r in rows], list(range(len(sizes))))
        self.assertEqual([int(r["frame.len"]) for r in rows], [len(bytes(f)) for f in sent])
        self.assertEqual({r["ip.ttl"] for r in rows}, {"63"})
        self.assertEqual({(r["eth.src"], r["eth.dst"]) for r in rows}, {(ROUTER, MACS["h1"])})
        # every frame sent was forwarded (above); a drop can only be of a frame the test did
        # not send (a kernel's frame on a fresh veth): as many drops as such frames received
        rx = sum(p["rx_packets"] for p in counters["ports"])
        self.assertEqual(sum(counters["drops"].values()), rx - len(sent),
                         (counters["drops"], rx, len(sent)))
        return err

    def test_af_packet(self):
        self.check_forwarded(("net_af_packet", "net_af_packet"), {"h0": 1500, "h1": 1500},
                             [64, 512, 1400])

    def test_af_packet_jumbo(self):
        # plain net_af_packet devargs on veths of the project's default MTU 9100: the ring is
        # sized to the MTU (its default 2 KiB frames cut larger ones), so a RoCE MTU 4096 frame
        # and a 9100-byte IP packet arrive whole
        full = 9100 + 14 - len(bytes(frames([0])[0]))  # the payload of a 9100-byte IP packet
        self.check_forwarded(("net_af_packet", "net_af_packet"), {"h0": 9100, "h1": 9100},
                             [64, 1400, 2100, 4096, full])

    def test_af_xdp_default_mtu(self):
        # the config keeps the default MTU 9100: the ports start (they failed with "Failed to
        # create umem" before) and say what they carry
        err = self.check_forwarded(("net_af_xdp", "net_af_xdp"), {"h0": XDP_MTU, "h1": XDP_MTU},
                                   [64, 512, 1400, 3000, XDP_MTU - 80])
        self.assertIn("af_xdp carries frames of at most 3456 bytes", err)

    def test_jumbo_to_af_xdp_dropped(self):
        sizes = [1000, 5000, 1000]
        sent = frames(sizes)
        rows, counters, err, rc = self.run_lab(
            # af_packet's default 2 KiB ring frames would truncate the jumbo frame; its ring
            # frames must tile the blocks exactly (the driver indexes them as one array)
            "jumbo", ("net_af_packet,blocksz=8192,framesz=8192", "net_af_xdp"), sent,
            {"h0": 9100, "h1": XDP_MTU})
        self.assertIsNotNone(rows, f"the dataplane did not start ({rc}): {err}")
        drops = {k: v for k, v in counters["drops"].items() if v}
        self.assertEqual([int(r["infiniband.bth.psn"]) for r in rows], [0, 2], drops)
        self.assertEqual(drops, {"tx_too_big": 1})
        # a ring sized by hand below the MTU is said at start (8192 - 32 bytes of ring header)
        self.assertIn("af_packet ring frames of 8192 bytes carry frames of at most 8160 bytes",
                      err)

    def test_af_xdp_jumbo_interface_refused(self):
        rows, _, err, rc = self.run_lab("refused", ("net_af_xdp", "net_af_xdp"), frames([64]),
                                        {"h0": 9100, "h1": 9100})
        self.assertIsNone(rows)
        self.assertEqual(rc, 1, err)
        self.assertIn("its interface has MTU 9100", err)
        self.assertIn(f"mtu {XDP_MTU} or less", err)


if __name__ == "__main__":
    unittest.main(verbosity=1)
