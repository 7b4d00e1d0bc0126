"""`rocesw-dataplane --zone`: every switch of a zone file in one process, hosts on DPDK pcap
ports (no namespaces needed). Frames from one rack reach another through RTSW, CTSW, RTSW with
TTL decremented once per switch and MACs rewritten at each hop (the configs' own NEIGH and PORT
entries say which); an in-memory link delivers no frame before its propagation delay (5 ns/m)
and its serialization at the link's speed (REFERENCE §2-§3); every switch's counters balance;
what cannot be built is refused with the reason."""
import json
import os
import socket
import subprocess
import time
import unittest

import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, wrpcap

from common import DATAPLANE, ROCESW, ROOT, tmpdir

ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")
# --no-shconf and a per-process prefix: two runs of the suite on one machine never share DPDK's
# runtime directory (its lock made the second one fail)
EAL = ["--no-huge", "-m", "2048", "--no-pci", "-l", "0-1", "--no-shconf"]


def prefix(name):
    return f"{name}-{os.getpid()}"
WIRE_OVERHEAD = 24  # FCS + preamble/SFD + IFG (REFERENCE §3)


def read(path):
    """[(ns, frame)]: DPDK's pcap port writes nanosecond captures; others are in microseconds."""
    with open(path, "rb") as f:
        nano = f.read(4) in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec * (1 if nano else 1000), d) for d, m in r]
    finally:
        r.close()


def run_dataplane(d, zone, name_prefix, *extra, duration="2"):
    return subprocess.run([DATAPLANE, *EAL, "--file-prefix", prefix(name_prefix), "--", "--zone", zone,
                           "--duration", duration, "--stats-json", os.path.join(d, "s.json"),
                           *extra], capture_output=True, text=True, timeout=120)


def pcap_host(d, name, frames=()):
    """devargs of a host on a pcap port: sends frames (read at start), writes what it gets."""
    rx = os.path.join(d, f"in-{name}.pcap")
    wrpcap(rx, list(frames))
    return f"net_pcap_{name},rx_pcap={rx},tx_pcap={os.path.join(d, 'out-' + name + '.pcap')}"


def control(sock, proc):
    """A function sending one request on the control socket and returning the reply."""
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read())
        if time.monotonic() > deadline:
            raise AssertionError("no control socket")
        time.sleep(0.05)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)

    def call(req):
        s.send(json.dumps({"v": 1, **req}).encode())
        return json.loads(s.recv(1 << 22))
    call.close = s.close
    return call


def udp(src_mac, dst_mac, src, dst, sport, size=100):
    return (Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst, ttl=64) /
            UDP(sport=sport, dport=5000) / Raw(b"x" * size))


class TwoStage(unittest.TestCase):
    """config/zone-2stage.yaml, its hosts on pcap ports."""

    @classmethod
    def setUpClass(cls):
        cls.d = tmpdir()
        with open(ZONE) as f:
            z = yaml.safe_load(f)
        cls.cfg = {}
        for name, s in z["SWITCH"].items():
            path = os.path.join(os.path.dirname(ZONE), s["config"])
            s["config"] = path
            with open(path) as f:
                cls.cfg[name] = yaml.safe_load(f)
        h0 = cls.neigh("rtsw1", "10.1.0.1")
        gw = cls.cfg["rtsw1"]["PORT"]["Ethernet0"]["mac"]
        # 64 flows to h1 (rack rtsw2) and 8 to h4 (h0's own rack)
        frames = [udp(h0, gw, "10.1.0.1", "10.1.0.3", 1000 + i) for i in range(64)]
        frames += [udp(h0, gw, "10.1.0.1", "10.1.0.9", 2000 + i) for i in range(8)]
        for h in z["HOST"]:
            z["HOST"][h] = {"devargs": pcap_host(cls.d, h, frames if h == "h0" else [])}
        cls.zone = os.path.join(cls.d, "zone.yaml")
        with open(cls.zone, "w") as f:
            yaml.safe_dump(z, f)
        cls.r = run_dataplane(cls.d, cls.zone, "zonedp2s")
        with open(os.path.join(cls.d, "s.json")) as f:
            cls.stats = json.load(f)

    @classmethod
    def neigh(cls, sw, ip):
        return next(v["neigh"] for k, v in cls.cfg[sw]["NEIGH"].items() if k.endswith("|" + ip))

    def test_exit_and_every_switch_balances(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertIn("zone zone-2stage: 6 switches, 24 ports, 8 links", self.r.stderr)
        names = sorted(s["name"] for s in self.stats["switches"])
        self.assertEqual(names, sorted(self.cfg))
        for s in self.stats["switches"]:
            self.assertTrue(s["conservation"]["holds"], s["name"])
        self.assertEqual(self.stats["in_flight"], 0)

    def test_other_rack_three_hops(self):
        got = read(os.path.join(self.d, "out-h1.pcap"))
        self.assertEqual(len(got), 64)
        mac = self.cfg["rtsw2"]["PORT"]["Ethernet0"]["mac"]
        for _, data in got:
            p = Ether(data)
            self.assertEqual(p[IP].ttl, 64 - 3)  # RTSW, CTSW, RTSW
            self.assertEqual(p.src, mac)
            self.assertEqual(p.dst, self.neigh("rtsw2", "10.1.0.3"))
            self.assertEqual(p[IP].dst, "10.1.0.3")
        # nothing went where it should not
        for h in ("h0", "h2", "h3", "h5", "h6", "h7"):
            self.assertEqual(read(os.path.join(self.d, f"out-{h}.pcap")), [], h)

    def test_no_wait_between_switches(self):
        """Three hops of 15 ns + 200 ns + 200 ns + 15 ns of cable at 400G take microseconds: the
        frames to h1 leave rtsw2 within 0.1 s of those to h4 leaving rtsw1 (switches whose
        clocks started apart once held every frame for the gap, about 0.5 s over six)."""
        far = read(os.path.join(self.d, "out-h1.pcap"))
        near = read(os.path.join(self.d, "out-h4.pcap"))
        self.assertLess(far[-1][0] - near[0][0], 10**8)

    def test_same_rack_one_hop(self):
        got = read(os.path.join(self.d, "out-h4.pcap"))
        self.assertEqual(len(got), 8)
        for _, data in got:
            p = Ether(data)
            self.assertEqual(p[IP].ttl, 63)
            self.assertEqual(p.dst, self.neigh("rtsw1", "10.1.0.9"))

    def test_links_carry_the_flows(self):
        by = {s["name"]: s for s in self.stats["switches"]}
        # the 64 cross-rack flows leave rtsw1 over its two uplinks and enter the CTSWs
        up = sum(p["tx_packets"] for p in by["rtsw1"]["ports"] if p["role"] == "uplink")
        self.assertEqual(up, 64)
        self.assertEqual(sum(p["rx_packets"] for c in ("ctsw1", "ctsw2")
                             for p in by[c]["ports"]), 64)
        links = {(l["a"], l["b"]): l for l in self.stats["links"]}
        for port, ctsw in (("Ethernet256", "ctsw1"), ("Ethernet264", "ctsw2")):
            l = links[(f"rtsw1|{port}", f"{ctsw}|Ethernet0")]
            tx = next(p["tx_packets"] for p in by["rtsw1"]["ports"] if p["name"] == port)
            self.assertEqual(l["a_to_b"]["frames"], tx)
            self.assertEqual(l["delay_ns"], 40 * 5)
        # ECMP over the two uplinks: a 5-tuple hash of 64 flows does not put them all on one
        self.assertTrue(all(l["a_to_b"]["frames"] for k, l in links.items()
                            if k[0].startswith("rtsw1|Ethernet2")))


def thread_cpu_s(pid, comm):
    """CPU seconds (user + system) of the thread of pid named comm."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            if f.read().strip() != comm:
                continue
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    raise AssertionError(f"no thread {comm}")


class Workers(unittest.TestCase):
    """The six switches of config/zone-2stage.yaml on one worker lcore (-l 0-1)."""

    def start(self, d, h0_frames, *extra):
        with open(ZONE) as f:
            z = yaml.safe_load(f)
        for s in z["SWITCH"].values():
            s["config"] = os.path.join(os.path.dirname(ZONE), s["config"])
        for h in z["HOST"]:
            rx = os.path.join(d, f"in-{h}.pcap")
            wrpcap(rx, h0_frames if h == "h0" else [])
            # h0 sends its capture over and over; what hosts receive is thrown away
            more = ",infinite_rx=1" if h == "h0" and h0_frames else ""
            z["HOST"][h] = {"devargs": f"net_pcap_{h},rx_pcap={rx},tx_pcap=/dev/null{more}"}
        path = os.path.join(d, "zone.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(z, f)
        sock = os.path.join(d, "ctl.sock")
        p = subprocess.Popen([DATAPLANE, *EAL, "--file-prefix", prefix("zonedpwk"), "--", "--zone", path,
                              "--control-socket", sock, *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.terminate(), p.wait(timeout=60), p.stderr.close()))
        c = control(sock, p)
        self.addCleanup(c.close)
        return p, c

    def counters(self, c):
        r = c({"op": "show", "what": "counters"})["result"]
        return ({s["name"]: sum(q["rx_packets"] for q in s["ports"]) for s in r["switches"]},
                r["workers"])

    def test_flood_every_switch_advances(self):
        d = tmpdir()
        gw, h0 = "02:00:00:00:01:00", "02:00:00:01:00:00"
        # to a host of every other rack (over both CTSWs) and to h0's rack neighbour
        frames = [udp(h0, gw, "10.1.0.1", f"10.1.0.{dst}", 1000 + i)
                  for i in range(16) for dst in (3, 5, 7, 9)]
        p, c = self.start(d, frames)
        before, _ = self.counters(c)
        time.sleep(1)
        after, workers = self.counters(c)
        self.assertEqual(len(workers), 1)
        self.assertEqual(len(workers[0]["ports"]), 24)
        for sw in before:
            self.assertGreater(after[sw], before[sw], f"{sw} did not forward")

    def test_idle_worker_sleeps(self):
        """Idle, the worker sleeps most of the time and uses little CPU; with
        --idle-sleep-us 0 it never sleeps (it spins)."""
        d = tmpdir()
        p, c = self.start(d, [])
        _, w0 = self.counters(c)
        cpu0, t0 = thread_cpu_s(p.pid, "rte-worker-1"), time.monotonic()
        time.sleep(1.5)
        _, w1 = self.counters(c)
        cpu1, t1 = thread_cpu_s(p.pid, "rte-worker-1"), time.monotonic()
        slept = (w1[0]["slept_us"] - w0[0]["slept_us"]) / 1e6
        self.assertGreater(slept, 0.5 * (t1 - t0))
        self.assertLess(cpu1 - cpu0, 0.5 * (t1 - t0))
        p.terminate()
        p.wait(timeout=60)
        p, c = self.start(tmpdir(), [], "--idle-sleep-us", "0")
        time.sleep(0.5)
        _, w = self.counters(c)
        self.assertGreater(w[0]["rounds"], 0)
        self.assertEqual(w[0]["sleeps"], 0)

    def test_pin(self):
        d = tmpdir()
        # two workers (lcores 1 and 2 share a CPU); rtsw1 and ctsw1 on worker 1, the rest round-robin
        global EAL
        saved = EAL
        EAL = ["--no-huge", "-m", "2048", "--no-pci", "--lcores", "0@0,1@1,2@1"]
        try:
            p, c = self.start(d, [], "--pin", "rtsw1=1", "--pin", "ctsw1=1")
        finally:
            EAL = saved
        _, w = self.counters(c)
        on1 = {n.split("|")[0] for n in w[1]["ports"]}
        self.assertIn("rtsw1", on1)
        self.assertNotIn("rtsw1", {n.split("|")[0] for n in w[0]["ports"]})
        self.assertNotIn("ctsw1", {n.split("|")[0] for n in w[0]["ports"]})
        self.assertEqual(len(w[0]["ports"]) + len(w[1]["ports"]), 24)
        for bad, msg in ((["--pin", "nosuch=0"], "no such switch in the zone"),
                         (["--pin", "rtsw1=1"], "there are 1 workers (0-0)"),
                         (["--pin", "rtsw1"], "expected SWITCH=WORKER")):
            r = run_dataplane(d, os.path.join(d, "zone.yaml"), "zonedpwk2", *bad)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(msg, r.stderr)


SW_A = """
DEVICE_METADATA:
  localhost: {hostname: a, mac: "02:00:00:00:0a:00"}
PORT:
  Ethernet0: {speed: 100000, role: host}
  Ethernet8: {speed: 100000, role: host}
  Ethernet16: {speed: %(speed)d, role: uplink}
NEIGH:
  "Ethernet0|10.0.0.1": {neigh: "02:00:00:00:00:01"}
  "Ethernet8|10.0.0.2": {neigh: "02:00:00:00:00:02"}
  "Ethernet16|10.9.0.1": {neigh: "02:00:00:00:0b:00"}
STATIC_ROUTE:
  "10.0.0.2/32": {nexthop: "10.0.0.2"}
  "10.0.1.0/24": {nexthop: "10.9.0.1"}
"""
SW_B = """
DEVICE_METADATA:
  localhost: {hostname: b, mac: "02:00:00:00:0b:00"}
PORT:
  Ethernet0: {speed: %(speed)d, role: downlink}
  Ethernet8: {speed: 100000, role: host}
NEIGH:
  "Ethernet8|10.0.1.1": {neigh: "02:00:00:00:01:01"}
STATIC_ROUTE:
  "10.0.1.1/32": {nexthop: "10.0.1.1"}
"""


class Link(unittest.TestCase):
    """Two switches, one slow and long in-memory link between them."""

    SPEED = 1000     # Mb/s
    LENGTH = 100000  # m: 500 us of propagation
    N = 20
    SIZE = 1000

    def zone(self, d, hosts, extra_host=None):
        with open(os.path.join(d, "a.yaml"), "w") as f:
            f.write(SW_A % {"speed": self.SPEED})
        with open(os.path.join(d, "b.yaml"), "w") as f:
            f.write(SW_B % {"speed": self.SPEED})
        z = {"SWITCH": {"a": {"config": "a.yaml"}, "b": {"config": "b.yaml"}},
             "HOST": hosts,
             "LINK": [{"a": "h0", "b": "a|Ethernet0"}, {"a": "h2", "b": "a|Ethernet8"},
                      {"a": "a|Ethernet16", "b": "b|Ethernet0", "length": f"{self.LENGTH}m"},
                      {"a": "b|Ethernet8", "b": extra_host or "h1"}]}
        path = os.path.join(d, "zone.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(z, f)
        return path

    def test_delay_and_speed(self):
        d = tmpdir()
        frames = []
        for i in range(self.N):  # to h1 over the link, then to h2 (a's own host port)
            frames.append(udp("02:00:00:00:00:01", "02:00:00:00:0a:00", "10.0.0.1", "10.0.1.1",
                              3000 + i, self.SIZE))
            frames.append(udp("02:00:00:00:00:01", "02:00:00:00:0a:00", "10.0.0.1", "10.0.0.2",
                              4000 + i, self.SIZE))
        hosts = {"h0": {"devargs": pcap_host(d, "h0", frames)},
                 "h1": {"devargs": pcap_host(d, "h1")}, "h2": {"devargs": pcap_host(d, "h2")}}
        r = run_dataplane(d, self.zone(d, hosts), "zonedplink")
        self.assertEqual(r.returncode, 0, r.stderr)
        far, near = read(os.path.join(d, "out-h1.pcap")), read(os.path.join(d, "out-h2.pcap"))
        self.assertEqual((len(far), len(near)), (self.N, self.N))
        frame_len = len(far[0][1])
        wire_ns = (frame_len + WIRE_OVERHEAD) * 8 * 1000 / self.SPEED
        delay_ns = self.LENGTH * 5
        # the frames to h2 left a's host port at once; those to h1 crossed the link one after
        # the other at 1 Gb/s, then 500 us of fibre. Slack of 20 us for the two ports' polls.
        t0 = near[0][0]
        self.assertGreaterEqual(far[0][0] - t0, delay_ns - 20000)
        self.assertGreaterEqual(far[-1][0] - t0, delay_ns + (self.N - 1) * wire_ns - 20000)
        self.assertLess(far[-1][0] - t0, 10**9)
        for _, data in far:
            self.assertEqual(Ether(data)[IP].ttl, 62)

    def test_control_socket(self):
        """One socket for the zone: requests name their switch."""
        d = tmpdir()
        hosts = {h: {"devargs": pcap_host(d, h)} for h in ("h0", "h1", "h2")}
        sock = os.path.join(d, "ctl.sock")
        p = subprocess.Popen([DATAPLANE, *EAL, "--file-prefix", prefix("zonedpctl"), "--", "--zone",
                              self.zone(d, hosts), "--control-socket", sock],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            c = control(sock, p)
            r = c({"op": "hello"})
            self.assertEqual(sorted(r["result"]["switches"]), ["a", "b"])
            # an op on a zone without a switch: refused with the list, nothing changed
            r = c({"op": "set_port", "port": "Ethernet16", "admin": "down"})
            self.assertFalse(r["ok"])
            self.assertIn("name a switch (\"switch\": one of a, b)", r["error"])
            r = c({"op": "set_port", "switch": "c", "port": "Ethernet16", "admin": "down"})
            self.assertIn("no switch 'c' in zone", r["error"])
            # the port exists in a only: b refuses it, a takes it
            r = c({"op": "set_port", "switch": "b", "port": "Ethernet16", "admin": "down"})
            self.assertIn("no port named Ethernet16", r["error"])
            r = c({"op": "set_port", "switch": "a", "port": "Ethernet16", "admin": "down"})
            self.assertTrue(r["ok"], r)
            self.assertEqual(r["result"]["switch"], "a")
            ports = {s: {q["name"]: q["admin_status"] for q in
                         c({"op": "show", "what": "ports", "switch": s})["result"]}
                     for s in ("a", "b")}
            self.assertEqual(ports["a"]["Ethernet16"], "down")
            self.assertEqual(ports["b"]["Ethernet0"], "up")
            r = c({"op": "show", "what": "counters"})
            self.assertEqual([s["name"] for s in r["result"]["switches"]], ["a", "b"])
            self.assertEqual(len(r["result"]["links"]), 1)
            # the CLI: SWITCH|PORT, --switch, and the zone's counters switch by switch
            cli = [ROCESW]
            r = subprocess.run(cli + ["set", "port", "a|Ethernet16", "up", "--socket", sock],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run(cli + ["show", "ports", "--switch", "a", "--json", "--socket", sock],
                               capture_output=True, text=True)
            self.assertEqual({q["name"]: q["admin_status"] for q in json.loads(r.stdout)}
                             ["Ethernet16"], "up")
            r = subprocess.run(cli + ["set", "port", "Ethernet16", "down", "--socket", sock],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("name a switch", r.stderr)
            r = subprocess.run(cli + ["show", "counters", "--socket", sock], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("== a\n", r.stdout)
            self.assertIn("== b\n", r.stdout)
            c.close()
        finally:
            p.terminate()
            p.wait(timeout=60)
            p.stderr.close()

    def test_lab_refuses_what_it_cannot_build(self):
        """scripts/lab.py names every host it cannot build and builds nothing."""
        d = tmpdir()
        path = self.zone(d, {"h0": {"devargs": "net_tap0,iface=t0"},
                             "h2": {"devargs": "net_memif0,role=server"}, "h1": {}})
        with open(os.path.join(d, "b.yaml")) as f:
            b = f.read()
        with open(os.path.join(d, "b.yaml"), "w") as f:  # h1's port loses its NEIGH entry
            f.write(b.replace('  "Ethernet8|10.0.1.1": {neigh: "02:00:00:00:01:01"}\n', ""))
        r = subprocess.run([os.path.join(ROOT, "scripts", "lab.py"), "up", path],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("host h0: devargs 'net_tap0,iface=t0' is not an af_packet or af_xdp", r.stderr)
        self.assertIn("host h2: devargs 'net_memif0,role=server'", r.stderr)
        self.assertIn("host h1: b has no INTERFACE address and no IPv4 NEIGH entry on Ethernet8",
                      r.stderr)
        self.assertFalse(os.path.exists("/sys/class/net/t0"))
        # a file with neither af_packet ports nor SWITCH: nothing to build, said so
        r = subprocess.run([os.path.join(ROOT, "scripts", "lab.py"), "up",
                            os.path.join(d, "a.yaml")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing to build", r.stderr)

    def test_refusals(self):
        d = tmpdir()
        # a host whose default veth name rsw-HOST would not fit an interface name
        long_host = "averyverylonghost"
        path = self.zone(d, {"h0": {}, "h2": {}, long_host: {}}, extra_host=long_host)
        r = run_dataplane(d, path, "zonedpbad")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"host {long_host}: no devargs, and rsw-{long_host} is too long", r.stderr)
        # --config and --zone together, or neither
        for args in (["--zone", path, "--config", path], []):
            r = subprocess.run([DATAPLANE, *EAL, "--file-prefix", prefix("zonedpbad"), "--", *args],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("give one of --config F or --zone Z", r.stderr)
        # a broken zone names the file and line
        with open(path, "a") as f:
            f.write("BOGUS: {}\n")
        r = run_dataplane(d, path, "zonedpbad")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown table in a zone config", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
