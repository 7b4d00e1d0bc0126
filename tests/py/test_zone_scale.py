"""A zone the size of a real AI Zone (issue 17): scripts/gen_zone.py writes 192 RTSW x 16 hosts and
16 CTSW (208 switches, 3072 hosts, 6144 links, with its default Tomahawk-class and Jericho-class
buffers), and `rocesw replay` runs a ring AllReduce over one host of every rack on it.

Checked against expectations computed here, not against an earlier run:
- the zone has the switches, hosts and links the generator's arithmetic says;
- the collective completes and each ring flow carries 2 (N - 1) x ceil(S / N / MTU) data packets
  (NCCL's ring: ReduceScatter then AllGather, a chunk of S / N per step);
- every switch forwarded traffic (ECMP spreads the racks' flows over all 16 CTSWs) and its
  counters balance: the packets its ports received = the packets its ports sent + its drops,
  with nothing dropped and nothing left queued;
- a second run writing every capture (frames cut to 64 bytes) leaves summary.json byte-identical.
"""
import ipaddress
import json
import os
import subprocess
import sys
import unittest

from common import ROCESW, ROOT, tmpdir

RACKS, HOSTS, CTSWS = 192, 16, 16
SIZE, MTU = 1536 * 1024, 4096


class ZoneScale(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.zone = os.path.join(cls.dir, "zone")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_zone.py"), "--racks",
                        str(RACKS), "--hosts", str(HOSTS), "--ctsws", str(CTSWS), "--out", cls.zone],
                       check=True, capture_output=True)
        cls.out = {}
        for name, caps in (("off", ["--captures", "none"]), ("on", ["--capture-snaplen", "64"])):
            out = os.path.join(cls.dir, name)
            r = subprocess.run([ROCESW, "replay", "--config", os.path.join(cls.zone, "zone.yaml"),
                                "--collective", f"ring,size={SIZE},ranks={RACKS}", "--out", out,
                                "--sample-ns", "0", "--quiet", *caps],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
            if r.returncode != 0:
                raise AssertionError(f"replay failed ({r.returncode}): {r.stderr}")
            cls.out[name] = out
        with open(os.path.join(cls.out["off"], "summary.json")) as f:
            cls.s = json.load(f)

    def test_zone_shape(self):
        self.assertEqual(len(self.s["switches"]), RACKS + CTSWS)
        self.assertEqual(len(self.s["hosts"]), RACKS * HOSTS)
        self.assertEqual(len(self.s["links"]), RACKS * HOSTS + RACKS * CTSWS)

    def test_collective_completes_with_the_ring_packet_count(self):
        c = self.s["collective"]
        self.assertTrue(c["complete"])
        per_step = -(-(SIZE // RACKS) // MTU)
        want = 2 * (RACKS - 1) * per_step
        # rank i (host hi, 10.1.0.1 + 2i) sends its data to rank i + 1
        ip = lambda i: str(ipaddress.IPv4Address(int(ipaddress.IPv4Address("10.1.0.1")) + 2 * i))
        data = {(ip(i), ip((i + 1) % RACKS)) for i in range(RACKS)}
        ring = [fl for fl in self.s["flows"] if (fl["src"], fl["dst"]) in data]
        self.assertEqual(len(ring), RACKS)
        for fl in ring:
            self.assertEqual(fl["packets_in"], want, fl)
            self.assertEqual(fl["packets_out"], want, fl)

    def test_every_switch_forwards_and_balances(self):
        for sw in self.s["switches"]:
            rx = sum(p["rx_packets"] for p in sw["ports"])
            tx = sum(p["tx_packets"] for p in sw["ports"])
            dropped = sum(sw["drops"].values())
            self.assertGreater(rx, 0, sw["name"])
            self.assertEqual(dropped, 0, (sw["name"], sw["drops"]))
            self.assertEqual(rx, tx + dropped, sw["name"])
            self.assertTrue(sw["conservation"]["holds"], sw["name"])
            self.assertEqual(sw["conservation"]["queued"], 0, sw["name"])
        self.assertTrue(self.s["conservation"]["holds"])

    def test_captures_off_same_summary(self):
        with open(os.path.join(self.out["on"], "summary.json"), "rb") as a, \
                open(os.path.join(self.out["off"], "summary.json"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        caps = [f for _, _, fs in os.walk(self.out["on"]) for f in fs if f.endswith(".pcap")]
        self.assertEqual(len(caps), 2 * len(self.s["links"]))  # every port and host has a link
        self.assertFalse([f for _, _, fs in os.walk(self.out["off"]) for f in fs if f.endswith(".pcap")])


if __name__ == "__main__":
    unittest.main()
