"""Live: hosts with an ordinary network stack and no static neighbour entries, through one
switch (config/lab.yaml without its NEIGH table) and through the zone config/zone-2stage.yaml
(its RTSWs' host NEIGH entries removed). scripts/lab.py gives the hosts addresses in the
switch's INTERFACE subnets and default routes via the switch's addresses; the switch answers
ARP and neighbour solicitations, learns the hosts, resolves the next hops of its host routes.

Checked: ping across the switch (IPv4 and IPv6) and across racks of the zone (TTL 61: three
switches); ping to the switch's own addresses answered; tshark's reading of the switch's ARP
reply and neighbour advertisement captured on the host (opcode, addresses, MAC, NA flags and
option, ICMPv6 checksum verified); `rocesw show arp` / `show ndp` (`--switch` in the zone) list
the learnt hosts with the MACs of their namespaces' eth0; a conflicting ARP does not override a
static NEIGH entry; a learnt host that answers the switch's probes stays, and once it is gone the
entry ages out within the configured timeout (polled on the control socket); a reload that
configures a learnt host's address on another port leaves the configured entry alone."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import DATAPLANE, ROOT, tmpdir  # noqa: E402
from labnet import Control, Lab, wait_for_line, wait_until  # noqa: E402

LAB = os.path.join(ROOT, "scripts", "lab.py")
ROCESW = os.path.join(os.path.dirname(DATAPLANE), "rocesw")
SWITCH_MAC = "02:00:00:00:01:00"
STATIC_MAC = "02:00:00:00:99:99"
TIMEOUT_S = 3  # --neigh-timeout of the single-switch run


def ns_run(ns, *cmd, **kw):
    return subprocess.run(["ip", "netns", "exec", ns] + list(cmd), capture_output=True, text=True,
                          **kw)


def eth0_mac(ns):
    return json.loads(ns_run(ns, "ip", "-j", "link", "show", "eth0").stdout)[0]["address"]


def ping(ns, addr, count=3):
    """Received replies and the TTLs / hop limits they arrived with."""
    r = ns_run(ns, "ping", "-c", str(count), "-i", "0.2", "-W", "5", addr, timeout=60)
    return len(re.findall(r"bytes from", r.stdout)), set(re.findall(r"(?:ttl|hlim)=(\d+)",
                                                                      r.stdout))


def prime(ns, addr):
    """The first packet towards a host nobody resolved yet is dropped while the switch asks for
    it (counted as neighbor_miss): ping until one reply arrives."""
    wait_until(lambda: ping(ns, addr, 1)[0] == 1, f"a reply from {addr} in {ns}")


def entries(ctl, what, switch=None):
    req = {"v": 1, "op": "show", "what": what}
    if switch:
        req["switch"] = switch
    r = ctl.request(req)
    if not r.get("ok"):
        raise AssertionError(f"show {what}: {r}")
    return r["result"]


def entry(ctl, what, addr, switch=None):
    return next((e for e in entries(ctl, what, switch)["entries"] if e["address"] == addr), None)


def start_dataplane(lab, args, prefix):
    dp = lab.start([DATAPLANE, "--no-huge", "-m", "2048", "--no-pci", "-l", "0-1", "--no-shconf",
                    "--file-prefix", prefix, "--log-level", "error", "--"] + args,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_line(dp.stderr, "forwarding")
    return dp


def tshark(path, filt, fields):
    out = subprocess.run(["tshark", "-r", path, "-Y", filt, "-o", "icmpv6.checksum:TRUE", "-T",
                          "fields"] + sum((["-e", f] for f in fields), []),
                         capture_output=True, text=True)
    if out.returncode:  # older tshark: no such preference; it verifies ICMPv6 checksums anyway
        out = subprocess.run(["tshark", "-r", path, "-Y", filt, "-T", "fields"] +
                             sum((["-e", f] for f in fields), []), capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line]


def arp_frame(src_mac, sender_ip, target_ip):
    """An ARP request (RFC 826) claiming sender_ip is at src_mac."""
    mac = bytes.fromhex(src_mac.replace(":", ""))
    return (b"\xff" * 6 + mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac +
            socket.inet_aton(sender_ip) + b"\0" * 6 + socket.inet_aton(target_ip)).ljust(60, b"\0")


def lab_up(test, config):
    r = subprocess.run([LAB, "up", config], capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stderr)
    test.addCleanup(subprocess.run, [LAB, "down", config], capture_output=True)


class LiveArp(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            raise AssertionError("the live tests need root (network namespaces); CI runs as root")
        if not shutil.which("tshark"):
            raise AssertionError("tshark is needed (scripts/setup.sh installs it)")

    def test_one_switch(self):
        d = tmpdir()
        with open(os.path.join(ROOT, "config", "lab.yaml")) as f:
            cfg = yaml.safe_load(f)
        # no neighbour for the hosts; one static entry in h0's subnet for an address nobody has
        cfg["INTERFACE"] = {k.replace("10.1.0.0/31", "10.1.0.0/30"): v
                            for k, v in cfg["INTERFACE"].items()}
        cfg.pop("NEIGH")
        cfg["INTERFACE"] = {k: v for k, v in cfg["INTERFACE"].items() if "10.1.0.2/31" not in k}
        cfg["INTERFACE"]["Ethernet8|10.1.0.4/31"] = {}
        cfg["STATIC_ROUTE"] = {"10.1.0.1/32": {"nexthop": "10.1.0.1"},
                               "10.1.0.5/32": {"nexthop": "10.1.0.5"},
                               "fc00:1::1/128": {"nexthop": "fc00:1::1"},
                               "fc00:1::3/128": {"nexthop": "fc00:1::3"}}
        lab_config = os.path.join(d, "lab.yaml")
        with open(lab_config, "w") as f:
            yaml.safe_dump(cfg, f)
        lab_up(self, lab_config)  # lab.py would give a host the static entry's address
        cfg["NEIGH"] = {"Ethernet0|10.1.0.2": {"neigh": STATIC_MAC}}
        config = os.path.join(d, "switch.yaml")
        with open(config, "w") as f:
            yaml.safe_dump(cfg, f)
        sock = os.path.join(d, "ctl.sock")
        cap = os.path.join(d, "h0.pcap")
        lab = Lab("arp")
        self.addCleanup(lab.close)
        tcpdump = lab.capture("h0", cap, "arp or icmp6")
        dp = start_dataplane(lab, ["--config", config, "--control-socket", sock,
                                   "--neigh-timeout", str(TIMEOUT_S)], "rswarp1")
        ctl = Control(sock)
        h0, h1 = eth0_mac("h0"), eth0_mac("h1")

        # the switch's own addresses answer, IPv4 and IPv6
        self.assertEqual(ping("h0", "10.1.0.0")[0], 3)
        self.assertEqual(ping("h0", "fc00:1::")[0], 3)
        # across the switch: the first packet may be lost while the switch asks for h1
        for addr in ("10.1.0.5", "fc00:1::3"):
            prime("h0", addr)
            got, ttl = ping("h0", addr, 5)
            self.assertEqual(got, 5, addr)
            self.assertEqual(ttl, {"63"}, "one routed hop: the reply's TTL/hop limit less one")

        arp = {e["address"]: e for e in entries(ctl, "arp")["entries"]}
        self.assertEqual((arp["10.1.0.1"]["mac"], arp["10.1.0.1"]["port"], arp["10.1.0.1"]["type"]),
                         (h0, "Ethernet0", "dynamic"))
        self.assertEqual((arp["10.1.0.5"]["mac"], arp["10.1.0.5"]["port"]), (h1, "Ethernet8"))
        ndp = {e["address"]: e for e in entries(ctl, "ndp")["entries"]}
        self.assertEqual((ndp["fc00:1::1"]["mac"], ndp["fc00:1::3"]["mac"]), (h0, h1))
        r = subprocess.run([ROCESW, "show", "arp", "--socket", sock], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"Address\s+MacAddress\s+Iface\s+Vlan\s+Type")
        self.assertRegex(r.stdout, rf"10\.1\.0\.1\s+{h0}\s+Ethernet0\s+-\s+dynamic")
        self.assertRegex(r.stdout, rf"10\.1\.0\.2\s+{STATIC_MAC}\s+Ethernet0\s+-\s+static")
        self.assertIn("Total number of entries 3", r.stdout)
        c = entries(ctl, "arp")["counters"]
        self.assertGreaterEqual(c["arp_request_tx"], 1, "the switch asked for h1")
        drops = ctl.show("counters")["drops"]
        self.assertGreaterEqual(drops["neighbor_miss"], 1, "what waited for h1 is counted")

        # a conflicting ARP (h0 claiming the static neighbour's address) changes nothing
        kept = c["static_kept"]
        r = ns_run("h0", "/usr/bin/python3", "-c",
                   "import socket,sys; s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
                   "s.bind(('eth0', 0)); s.send(bytes.fromhex(sys.argv[1]))",
                   arp_frame(h0, "10.1.0.2", "10.1.0.0").hex())
        self.assertEqual(r.returncode, 0, r.stderr)
        wait_until(lambda: entries(ctl, "arp")["counters"]["static_kept"] > kept,
                   "the conflicting ARP counted")
        e = entry(ctl, "arp", "10.1.0.2")
        self.assertEqual((e["mac"], e["type"]), (STATIC_MAC, "static"))

        # a host that answers the switch's probes stays past the timeout
        probes = entries(ctl, "arp")["counters"]["probe_tx"]
        wait_until(lambda: entries(ctl, "arp")["counters"]["probe_tx"] > probes + 1,
                   "the switch probing h0", timeout=TIMEOUT_S * 4)
        self.assertEqual(entry(ctl, "arp", "10.1.0.1")["type"], "dynamic")
        # gone from the link, h0 ages out: within the timeout of the last time it was heard
        ns_run("h0", "ip", "link", "set", "eth0", "down")
        t0 = time.monotonic()
        wait_until(lambda: entry(ctl, "arp", "10.1.0.1") is None, "h0 aged out",
                   timeout=TIMEOUT_S * 4)
        self.assertLessEqual(time.monotonic() - t0, TIMEOUT_S + 1.0,
                             "aged within the timeout (plus an ageing step and a poll)")
        self.assertGreaterEqual(entries(ctl, "arp")["counters"]["aged"], 1)
        self.assertIsNotNone(entry(ctl, "arp", "10.1.0.5"), "h1 still answers")

        # a reload configuring h1's address on another port: the configured entry stands
        # alone (the learnt one on Ethernet8 goes), other learnt entries stay
        cfg["NEIGH"]["Ethernet0|10.1.0.5"] = {"neigh": STATIC_MAC}
        config2 = os.path.join(d, "switch2.yaml")
        with open(config2, "w") as f:
            yaml.safe_dump(cfg, f)
        r = subprocess.run([ROCESW, "reload", config2, "--socket", sock], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        h1_entries = lambda: [(e["port"], e["mac"], e["type"])  # noqa: E731
                              for e in entries(ctl, "arp")["entries"] if e["address"] == "10.1.0.5"]
        wait_until(lambda: h1_entries() == [("Ethernet0", STATIC_MAC, "static")],
                   "the configured entry alone for 10.1.0.5")
        self.assertEqual(entry(ctl, "ndp", "fc00:1::3")["type"], "dynamic", "kept by the reload")

        Lab.stop(tcpdump)
        rows = tshark(cap, "arp.opcode == 2", ["eth.src", "eth.dst", "arp.src.hw_mac",
                                               "arp.src.proto_ipv4", "arp.dst.hw_mac",
                                               "arp.dst.proto_ipv4"])
        self.assertIn([SWITCH_MAC, h0, SWITCH_MAC, "10.1.0.0", h0, "10.1.0.1"], rows)
        rows = tshark(cap, "icmpv6.type == 136 && eth.src == " + SWITCH_MAC,
                      ["ipv6.src", "ipv6.dst", "ipv6.hlim", "icmpv6.nd.na.flag.r",
                       "icmpv6.nd.na.flag.s", "icmpv6.nd.na.flag.o", "icmpv6.nd.na.target_address",
                       "icmpv6.opt.linkaddr", "icmpv6.checksum.status"])
        self.assertTrue(rows, "a neighbour advertisement from the switch")
        for row in rows:
            self.assertEqual(row[:3], ["fc00:1::", "fc00:1::1", "255"])
            self.assertEqual([v in ("1", "True") for v in row[3:6]], [True, True, True])
            self.assertEqual(row[6:8], ["fc00:1::", SWITCH_MAC])
            self.assertEqual(row[8], "1", "tshark verified the ICMPv6 checksum")
        dp.send_signal(2)
        out, err = dp.communicate(timeout=60)
        self.assertEqual(dp.returncode, 0, out + err)

    def test_zone(self):
        d = tmpdir()
        src = os.path.join(ROOT, "config", "zone-2stage")
        shutil.copytree(src, os.path.join(d, "zone-2stage"))
        for i in range(1, 5):
            path = os.path.join(d, "zone-2stage", f"rtsw{i}.yaml")
            with open(path) as f:
                text = f.read()
            # the hosts' NEIGH entries go: the switches learn their hosts
            with open(path, "w") as f:
                f.write(re.sub(r'  "Ethernet(0|8)\|10\.1\.0\.\d+": \{neigh: [^}]*\}\n', "", text))
        zone = os.path.join(d, "zone-2stage.yaml")
        shutil.copy(os.path.join(ROOT, "config", "zone-2stage.yaml"), zone)
        lab_up(self, zone)
        sock = os.path.join(d, "ctl.sock")
        lab = Lab("arpz")
        self.addCleanup(lab.close)
        dp = start_dataplane(lab, ["--zone", zone, "--control-socket", sock], "rswarp2")
        ctl = Control(sock)
        self.assertEqual(ping("h0", "10.1.0.0")[0], 3, "rtsw1 answers for its address")
        prime("h0", "10.1.0.3")
        got, ttl = ping("h0", "10.1.0.3", 5)
        self.assertEqual(got, 5)
        self.assertEqual(ttl, {"61"}, "three switches on the way back")
        for sw, addr, host, port in (("rtsw1", "10.1.0.1", "h0", "Ethernet0"),
                                     ("rtsw2", "10.1.0.3", "h1", "Ethernet0")):
            e = entry(ctl, "arp", addr, sw)
            self.assertIsNotNone(e, f"{sw} learnt {host}")
            self.assertEqual((e["mac"], e["port"], e["type"]), (eth0_mac(host), port, "dynamic"))
        self.assertIsNone(entry(ctl, "arp", "10.1.0.3", "rtsw1"), "rtsw1 routes 10.1.0.3 up")
        r = subprocess.run([ROCESW, "show", "arp", "--switch", "rtsw2", "--socket", sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, rf"10\.1\.0\.3\s+{eth0_mac('h1')}\s+Ethernet0\s+-\s+dynamic")
        dp.send_signal(2)
        out, err = dp.communicate(timeout=60)
        self.assertEqual(dp.returncode, 0, out + err)


if __name__ == "__main__":
    unittest.main()
