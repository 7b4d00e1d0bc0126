"""Live: scripts/lab.py builds the lab config/lab.yaml describes (two host namespaces on the
switch's af_packet ports, addresses and static gateway from the config's NEIGH table), the
dataplane forwards real Linux UDP traffic between them both ways (a datagram echo: 50 out, 50
back, payloads intact, TTL 63 on arrival), its counters add up, and `lab.py down` removes it
all."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import ROOT, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import wait_for_line  # noqa: E402

LAB = os.path.join(ROOT, "scripts", "lab.py")
CONFIG = os.path.join(ROOT, "config", "lab.yaml")

ECHO = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 12, 1)  # IP_RECVTTL (Linux; not in Python's socket module)
s.bind(("10.1.0.3", 7000))
print("ready", flush=True)
ttls = set()
for _ in range(50):
    data, anc, _, peer = s.recvmsg(2048, 64)
    ttls.update(c[2][0] for c in anc if c[1] == socket.IP_TTL)  # the cmsg holds an int
    s.sendto(data, peer)
print("ttl", sorted(ttls), flush=True)
"""

CLIENT = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(60)  # a hang guard: each datagram is answered or the test fails
s.bind(("10.1.0.1", 0))
got = 0
for i in range(50):
    msg = bytes([i]) * (100 + i)
    s.sendto(msg, ("10.1.0.3", 7000))
    data, _ = s.recvfrom(2048)
    got += data == msg
print("echoed", got)
"""


class LiveLab(unittest.TestCase):
    def test_lab_up_forward_down(self):
        require_root()
        d = tmpdir()
        stats = os.path.join(d, "stats.json")
        r = subprocess.run([LAB, "up", CONFIG], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        dp = server = None
        try:
            dp = subprocess.Popen(dataplane_cmd("rswlab", "--config", CONFIG, "--stats-json",
                                                stats),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding")
            server = subprocess.Popen(["ip", "netns", "exec", "h1", "/usr/bin/python3", "-c", ECHO],
                                      stdout=subprocess.PIPE, text=True)
            self.assertEqual(server.stdout.readline().strip(), "ready")
            r = subprocess.run(["ip", "netns", "exec", "h0", "/usr/bin/python3", "-c", CLIENT],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.stdout.strip(), "echoed 50", r.stderr)
            self.assertEqual(server.stdout.readline().strip(), "ttl [63]", "routed: TTL - 1")
            server.wait(10)
        finally:
            if server and server.poll() is None:
                server.kill()
            if dp:
                dp.send_signal(2)
                dp.wait(30)
                dp.stdout.close()
                dp.stderr.close()
            subprocess.run([LAB, "down", CONFIG], capture_output=True, text=True)
        with open(stats) as f:
            c = json.load(f)
        self.assertTrue(c["conservation"]["holds"], c["conservation"])
        ports = {p["name"]: p for p in c["ports"]}
        self.assertGreaterEqual(ports["Ethernet8"]["tx_packets"], 50)
        self.assertGreaterEqual(ports["Ethernet0"]["tx_packets"], 50)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        self.assertNotIn("h0", left.split())
        self.assertFalse(os.path.exists("/sys/class/net/rsw-h0"), "veth removed")


if __name__ == "__main__":
    unittest.main(verbosity=1)
