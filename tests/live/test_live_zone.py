"""Live: `scripts/lab.py up config/zone-2stage.yaml` builds a namespace per host (address and MAC
from the NEIGH entry of its rack switch), `rocesw-dataplane --zone` runs the six switches on
`-l 0-1`, and real Linux traffic crosses racks: a UDP echo h0 <-> h1 (TTL 64 - 3 on arrival:
RTSW, CTSW, RTSW), a TCP exchange h0 -> h5; captured on h1's veth (its eth0), each frame has the
source MAC of rtsw2's host port and h1's destination MAC (from the configs). Then 16 UDP flows
h0 -> h1, one at a time, placed on rtsw1's uplinks by the zone's per-port counters; `rocesw set
port rtsw1|Ethernet256 down` moves exactly the flows that were on it (resilient hashing) and
every datagram still arrives; the counters of the zone balance switch by switch; `lab.py down`
removes it all."""
import json
import os
import subprocess
import sys
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import ROCESW, ROOT, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import Control, wait_captured, wait_for_line, wait_until  # noqa: E402
from scapy.layers.inet import IP  # noqa: E402
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

SINK = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 7000))
print("ready", flush=True)
seen = {}
while True:
    _, (_, sport) = s.recvfrom(2048)
    seen[sport] = seen.get(sport, 0) + 1
    print(sport, seen[sport], flush=True)
"""

SENDER = """
import socket, sys
print("ready", flush=True)
for line in sys.stdin:
    sport, n = map(int, line.split())
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], sport))
    for i in range(n):
        s.sendto(bytes(64 + i), (sys.argv[2], 7000))
    s.close()
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
        require_root()
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

    def uplink_per_flow(self, ctl, n=5):
        """For each of 16 UDP flows h0:SPORT -> h1:7000 (sent one after the other, n datagrams
        each), the uplink of rtsw1 that carried it: the one port whose tx counter grew by n
        while h1 received the n datagrams."""
        sink = subprocess.Popen(ns_py("h1", SINK, "10.1.0.3"), stdout=subprocess.PIPE, text=True)
        sender = subprocess.Popen(ns_py("h0", SENDER, "10.1.0.1", "10.1.0.3"),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(sink.stdout.readline().strip(), "ready")
            self.assertEqual(sender.stdout.readline().strip(), "ready")
            placed = {}
            for sport in range(41000, 41016):
                t0 = self.uplink_tx(ctl)
                sender.stdin.write(f"{sport} {n}\n")
                sender.stdin.flush()
                wait_for_line(sink.stdout, f"{sport} {n}")  # the n-th datagram of the flow
                # a switch counts a burst after handing it to the link: with several workers,
                # rtsw1's may count it after h1 has the datagram
                t1 = wait_until(lambda: (lambda t: sum(t.values()) - sum(t0.values()) >= n and t)(
                    self.uplink_tx(ctl)), f"flow {sport}'s {n} frames counted on an uplink")
                grew = {p: t1[p] - t0[p] for p in t0}
                self.assertEqual(sorted(grew.values()), [0, n], f"flow {sport}: {grew}")
                placed[sport] = next(p for p, v in grew.items() if v)
            return placed
        finally:
            for p in (sender, sink):
                p.kill()
                p.wait()
                p.stdout.close()
            sender.stdin.close()

    @staticmethod
    def uplink_tx(ctl):
        sw = next(s for s in ctl.counters()["switches"] if s["name"] == "rtsw1")
        return {p["name"]: p["tx_packets"] for p in sw["ports"]
                if p["name"] in ("Ethernet256", "Ethernet264")}

    def test_zone_lab(self):
        d = tmpdir()
        stats, sock = os.path.join(d, "stats.json"), os.path.join(d, "ctl.sock")
        r = subprocess.run([LAB, "up", ZONE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        dp = cap = None
        try:
            dp = subprocess.Popen(dataplane_cmd("rswzone", "--zone", ZONE, "--stats-json", stats,
                                                "--control-socket", sock, mem=2048),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding", timeout=120)
            pcap = os.path.join(d, "h1.pcap")
            # on h1's end of its veth: af_packet's transmit bypasses the switch side's taps
            cap = subprocess.Popen(["ip", "netns", "exec", "h1", "tcpdump", "-i", "eth0", "-U",
                                    "--immediate-mode", "-n", "-s", "0", "-w", pcap,
                                    "udp port 7000"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_for_line(cap.stderr, "listening on")
            self.assertEqual(self.echo("h0", "10.1.0.1", "h1", "10.1.0.3", 50), "ttl [61]",
                             "three switches: TTL - 3")
            # every request and reply crossed h1's eth0 after tcpdump was listening: wait until
            # it has written all 100 (it hands them over as they come, --immediate-mode)
            wait_captured(pcap, 100)
            cap.send_signal(2)
            cap.wait(10)
            frames = [Ether(bytes(p)) for p in rdpcap(pcap)]
            to_h1 = [f for f in frames if f[IP].dst == "10.1.0.3"]
            from_h1 = [f for f in frames if f[IP].src == "10.1.0.3"]
            self.assertEqual((len(to_h1), len(from_h1)), (50, 50))
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
            # flow by flow (one UDP source port each, h0 -> h1), which of rtsw1's uplinks it takes,
            # read from the zone's per-port counters; then Ethernet256 down and again: flows on
            # Ethernet264 stay there, flows on Ethernet256 move to it, every datagram arrives.
            # One way only: a reply hashed to ctsw1 would be lost there, as in a fabric before
            # routing converges (ctsw1's one link to rack 1 is down; docs/replay.md, Failures)
            ctl = Control(sock)
            before = self.uplink_per_flow(ctl)
            self.assertEqual(set(before.values()), {"Ethernet256", "Ethernet264"},
                             f"16 flows use both uplinks: {before}")
            r = subprocess.run([ROCESW, "set", "port", "rtsw1|Ethernet256", "down",
                                "--socket", sock], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            after = self.uplink_per_flow(ctl)
            for sport, port in before.items():
                self.assertEqual(after[sport], "Ethernet264",
                                 f"flow {sport} was on {port}: now on Ethernet264")
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
