"""Live: `scripts/lab.py up config/zone-2stage.yaml` builds a namespace per host (address and MAC
from the NEIGH entry of its rack switch), `rocesw-dataplane --zone` runs the six switches on
`-l 0-1`, and real Linux traffic crosses racks: a UDP echo h0 <-> h1 (TTL 64 - 3 on arrival:
RTSW, CTSW, RTSW), a TCP exchange h0 -> h5; captured on h1's veth (its eth0), each frame has the source MAC
of rtsw2's host port and h1's destination MAC (from the configs); `rocesw set port
rtsw1|Ethernet256 down` leaves the echo working (the flow moves to the other uplink if it was on
it) and the counters of the zone balance switch by switch; `lab.py down` removes it all."""
import json
import os
import subprocess
import sys
import time
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import DATAPLANE, ROCESW, ROOT, tmpdir  # noqa: E402
from labnet import wait_for_line  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402

LAB = os.path.join(ROOT, "scripts", "lab.py")
ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")

ECHO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 12, 1)  # IP_RECVTTL
s.bind((sys.argv[1], 7000))
print("ready", flush=True)
ttls = set()
for _ in range(int(sys.argv[2])):
    data, anc, _, peer = s.recvmsg(2048, 64)
    ttls.update(c[2][0] for c in anc if c[1] == socket.IP_TTL)
    s.sendto(data, peer)
print("ttl", sorted(ttls), flush=True)
"""

CLIENT = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.bind((sys.argv[1], 0))
got = 0
for i in range(int(sys.argv[3])):
    msg = bytes([i % 256]) * (100 + i % 50)
    s.sendto(msg, (sys.argv[2], 7000))
    data, _ = s.recvfrom(2048)
    got += data == msg
print("echoed", got)
"""

TCP_SERVER = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7001))
s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
data = b""
while True:
    b = c.recv(65536)
    if not b:
        break
    data += b
c.sendall(str(len(data)).encode())
c.close()
"""

TCP_CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], 7001), timeout=20)
c.sendall(bytes(range(256)) * 800)
c.shutdown(socket.SHUT_WR)
print("acked", c.recv(100).decode())
"""


def ns_py(ns, code, *args, **kw):
    return ["ip", "netns", "exec", ns, "/usr/bin/python3", "-c", code, *args]


class LiveZone(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            raise AssertionError("the live tests need root (network namespaces); CI runs as root")
        with open(ZONE) as f:
            z = yaml.safe_load(f)
        self.cfg = {}
        for name, s in z["SWITCH"].items():
            with open(os.path.join(os.path.dirname(ZONE), s["config"])) as f:
                self.cfg[name] = yaml.safe_load(f)

    def neigh(self, sw, ip):
        return next(v["neigh"] for k, v in self.cfg[sw]["NEIGH"].items() if k.endswith("|" + ip))

    def echo(self, src_ns, src, dst_ns, dst, n):
        server = subprocess.Popen(ns_py(dst_ns, ECHO, dst, str(n)), stdout=subprocess.PIPE,
                                  text=True)
        try:
            self.assertEqual(server.stdout.readline().strip(), "ready")
            r = subprocess.run(ns_py(src_ns, CLIENT, src, dst, str(n)), capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.stdout.strip(), f"echoed {n}", r.stderr)
            ttl = server.stdout.readline().strip()
            server.wait(10)
            return ttl
        finally:
            if server.poll() is None:
                server.kill()
            server.stdout.close()

    def test_zone_lab(self):
        d = tmpdir()
        stats, sock = os.path.join(d, "stats.json"), os.path.join(d, "ctl.sock")
        r = subprocess.run([LAB, "up", ZONE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        dp = cap = None
        try:
            dp = subprocess.Popen([DATAPLANE, "--no-huge", "-m", "2048", "--no-pci", "-l", "0-1",
                                   "--no-shconf", "--file-prefix", "rswzone", "--log-level",
                                   "error", "--", "--zone", ZONE, "--stats-json", stats,
                                   "--control-socket", sock],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding", timeout=120)
            pcap = os.path.join(d, "h1.pcap")
            # on h1's end of its veth: af_packet's transmit bypasses the switch side's taps
            cap = subprocess.Popen(["ip", "netns", "exec", "h1", "tcpdump", "-i", "eth0", "-U",
                                    "-n", "-s", "0", "-w", pcap, "udp port 7000"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_for_line(cap.stderr, "listening on")
            self.assertEqual(self.echo("h0", "10.1.0.1", "h1", "10.1.0.3", 50), "ttl [61]",
                             "three switches: TTL - 3")
            time.sleep(0.5)  # the last reply reaches the capture
            cap.send_signal(2)
            cap.wait(10)
            frames = [Ether(bytes(p)) for p in rdpcap(pcap)]
            to_h1 = [f for f in frames if f[IP].dst == "10.1.0.3"]
            from_h1 = [f for f in frames if f[IP].src == "10.1.0.3"]
            # tcpdump may miss the first exchange (it says "listening" a little early)
            self.assertGreaterEqual(min(len(to_h1), len(from_h1)), 45)
            for f in to_h1:
                self.assertEqual(f.src, self.cfg["rtsw2"]["PORT"]["Ethernet0"]["mac"])
                self.assertEqual(f.dst, self.neigh("rtsw2", "10.1.0.3"))
                self.assertEqual(f[IP].ttl, 61)
            for f in from_h1:  # as h1 sent them: to its gateway, TTL 64
                self.assertEqual(f.dst, self.cfg["rtsw2"]["PORT"]["Ethernet0"]["mac"])
                self.assertEqual(f[IP].ttl, 64)
            # TCP across racks: h0 (rtsw1) to h5 (rtsw2)
            server = subprocess.Popen(ns_py("h5", TCP_SERVER, "10.1.0.11"),
                                      stdout=subprocess.PIPE, text=True)
            self.assertEqual(server.stdout.readline().strip(), "ready")
            try:
                r = subprocess.run(ns_py("h0", TCP_CLIENT, "10.1.0.11"), capture_output=True,
                                   text=True, timeout=60)
                self.assertEqual(r.stdout.strip(), f"acked {256 * 800}", r.stderr)
                server.wait(10)
            finally:
                if server.poll() is None:
                    server.kill()
                    server.wait()
                server.stdout.close()
            # one uplink of rtsw1 down: the echo goes on through the other
            env = dict(os.environ, ROCESW_SOCKET=sock)
            r = subprocess.run([ROCESW, "set", "port", "rtsw1|Ethernet256", "down"],
                               capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            c0 = json.loads(subprocess.run([ROCESW, "show", "counters", "--json"], env=env,
                                           capture_output=True, text=True).stdout)
            self.assertEqual(self.echo("h0", "10.1.0.1", "h1", "10.1.0.3", 20), "ttl [61]")
            c1 = json.loads(subprocess.run([ROCESW, "show", "counters", "--json"], env=env,
                                           capture_output=True, text=True).stdout)

            def tx(c, port):
                sw = next(s for s in c["switches"] if s["name"] == "rtsw1")
                return next(p["tx_packets"] for p in sw["ports"] if p["name"] == port)
            self.assertEqual(tx(c1, "Ethernet256"), tx(c0, "Ethernet256"), "down: nothing out")
            self.assertGreaterEqual(tx(c1, "Ethernet264") - tx(c0, "Ethernet264"), 20)
        finally:
            if cap and cap.poll() is None:
                cap.kill()
            if cap:
                cap.stderr.close()
            if dp:
                dp.send_signal(2)
                dp.wait(60)
                dp.stdout.close()
                dp.stderr.close()
            subprocess.run([LAB, "down", ZONE], capture_output=True, text=True)
        with open(stats) as f:
            c = json.load(f)
        for s in c["switches"]:
            self.assertTrue(s["conservation"]["holds"], (s["name"], s["conservation"]))
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for h in ("h0", "h1", "h7"):
            self.assertNotIn(h, left.split())
        self.assertFalse(os.path.exists("/sys/class/net/rsw-h0"), "veth removed")


if __name__ == "__main__":
    unittest.main(verbosity=1)
