"""Live: rocesw-dataplane with its control socket, a host sending RoCEv2 to 4 ECMP uplinks
(destination-QP hashing, resilient buckets) in network namespaces.

- `rocesw set port Ethernet16 down` while traffic flows: from the uplinks' captures, every flow
  that was on Ethernet16 moves and every other flow stays where it was; the bucket table (show
  ecmp) gives Ethernet16's buckets to the others and nothing else changes; the last frame on
  Ethernet16's link left within 10 ms of the request; `up` brings it back.
- `rocesw set route` takes effect on the next packets; a malformed one is refused and changes
  nothing.
- Garbage, truncated JSON, an oversized message, a wrong version and unknown ops get error
  replies while forwarding goes on; a user who is not root nor in the control group cannot
  connect (mode 0660) and, if the socket is opened up, is refused by SO_PEERCRED.
- dpdk-telemetry.py's /rocesw/counters and /rocesw/port_stats equal `rocesw show counters`."""
import json
import os
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import DATAPLANE, ROCESW, tmpdir, write_pcap  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Lab, four_uplink_config,  # noqa: E402
                    wait_for_line)

N_QP = 32
PREFIX = "rswctl"
HASH = """HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf: [{base: L4, offset: 13, length: 3, match: {ip_protocol: 17, l4_dst_port: 4791}}]"""


def frames(psn, dst="10.2.0.1"):
    return [rocepkt.roce(src="10.1.0.1", dst=dst, sport=49152, dqp=0x1000 + qp, psn=psn,
                         smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(64))
            for qp in range(N_QP)]


def request(path, obj=None, raw=None):
    """One message on the control socket; the decoded reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    s.send(raw if raw is not None else json.dumps(obj).encode())
    reply = json.loads(s.recv(1 << 22))
    s.close()
    return reply


class LiveControl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("the live tests need root (network namespaces); CI runs as root")
        cls.dir = tmpdir()
        cfg = os.path.join(cls.dir, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(four_uplink_config("rswc", "live-ctl", HASH,
                                       "hash_policy: dest_qp, buckets: 256, resilient: true"))
        # the directory lets anyone through: the socket's own mode is what keeps strangers out
        os.chmod(cls.dir, 0o755)
        cls.sock = os.path.join(cls.dir, "dp.sock")
        cls.lab = Lab("rswc")
        try:
            cls.h0 = cls.lab.host("h0", "rswc-h0", HOST_MAC)
            cls.ups = [cls.lab.host(f"u{i}", f"rswc-u{i}", UPLINK_MACS[i]) for i in range(4)]
            cls.dp = cls.lab.start([DATAPLANE, "--no-huge", "-m", "1024", "--no-pci", "-l", "0-1",
                                    "--no-shconf", "--file-prefix", PREFIX, "--log-level", "error",
                                    "--", "--config", cfg, "--control-socket", cls.sock,
                                    "--control-idle", "2"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(cls.dp.stderr, "forwarding")
            cls.caps = [os.path.join(cls.dir, f"u{i}.pcap") for i in range(4)]
            cls.tcpdumps = [cls.lab.capture(ns, p) for ns, p in zip(cls.ups, cls.caps)]
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def send(self, pkts, gap="0.0005"):
        path = write_pcap(os.path.join(self.dir, f"send-{time.time_ns()}.pcap"), pkts)
        r = subprocess.run(["ip", "netns", "exec", self.h0, "/usr/bin/python3",
                            os.path.join(HERE, "send_frames.py"), path, gap],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(0.5)

    def rocesw(self, *args, check=True):
        r = subprocess.run([ROCESW, *args, "--socket", self.sock], capture_output=True, text=True)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def show(self, what):
        return json.loads(self.rocesw("show", what, "--json").stdout)

    def placement(self, psn):
        """{qp: uplink index} of the frames with this PSN in the captures, once all N_QP flows
        are there (tcpdump writes them a little after the switch sent them) or 5 s passed."""
        deadline = time.time() + 5
        while True:
            out = self.read_placement(psn)
            if len(out) == N_QP or time.time() > deadline:
                return out
            time.sleep(0.2)

    def read_placement_range(self, lo, hi, uplink):
        """Frames with lo <= PSN < hi captured on one uplink so far."""
        cap = self.caps[uplink]
        if os.path.getsize(cap) <= 24:
            return []
        return [p for p in rdpcap(cap) if bytes(p)[12:14] == b"\x08\x00" and
                lo <= int.from_bytes(bytes(p)[51:54], "big") < hi]

    def read_placement(self, psn):
        out = {}
        for i, cap in enumerate(self.caps):
            if os.path.getsize(cap) <= 24:
                continue
            for p in rdpcap(cap):
                raw = bytes(p)
                if raw[12:14] != b"\x08\x00" or raw[23] != 17:
                    continue
                if int.from_bytes(raw[14 + 20 + 8 + 9:14 + 20 + 8 + 12], "big") != psn:
                    continue
                qp = int.from_bytes(raw[14 + 20 + 8 + 5:14 + 20 + 8 + 8], "big")
                self.assertEqual(out.setdefault(qp, i), i, "a flow on one uplink")
        return out

    def test_1_port_down_moves_only_its_flows(self):
        self.send(frames(1))
        before = self.placement(1)
        self.assertEqual(len(before), N_QP)
        on1 = {qp for qp, u in before.items() if u == 1}
        self.assertTrue(on1 and len(on1) < N_QP, "some flows on Ethernet16, some elsewhere")
        ecmp0 = {m["port"]: m["buckets"] for m in self.show("ecmp")[0]["members"]}
        # traffic keeps flowing while the port goes down: one frame per 0.2 ms over all QPs,
        # and the request goes once the flood is seen on Ethernet16's link
        flood = write_pcap(os.path.join(self.dir, "flood.pcap"),
                           [f for psn in range(2, 80) for f in frames(psn)])
        sender = subprocess.Popen(["ip", "netns", "exec", self.h0, "/usr/bin/python3",
                                   os.path.join(HERE, "send_frames.py"), flood, "0.0002"])
        deadline = time.time() + 20
        while time.time() < deadline and not self.read_placement_range(2, 80, uplink=1):
            time.sleep(0.01)
        t_req = time.time()
        reply = request(self.sock, {"v": 1, "id": 7, "op": "set_port", "port": "Ethernet16",
                                    "admin": "down"})
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(reply["id"], 7)
        sender.wait(60)
        self.send(frames(100))
        after = self.placement(100)
        self.assertEqual(len(after), N_QP, (sorted(set(before) - set(after)), sorted(on1),
                                            [(p["name"], p["rx_packets"], p["tx_packets"])
                                             for p in self.show("counters")["ports"]]))
        for qp, u in before.items():
            if qp in on1:
                self.assertNotEqual(after[qp], 1, "the failed member's flows moved")
            else:
                self.assertEqual(after[qp], u, "every other flow stayed")
        ecmp1 = {m["port"]: m["buckets"] for m in self.show("ecmp")[0]["members"]}
        self.assertNotIn("Ethernet16", ecmp1)
        self.assertEqual(sum(ecmp1.values()), 256)
        for port, n in ecmp1.items():
            self.assertGreaterEqual(n, ecmp0[port], "members only gain buckets")
        # the last frame on the failed link left within 10 ms of the request
        last = max(float(p.time) for p in rdpcap(self.caps[1]))
        self.assertLess(last - t_req, 0.010, f"Ethernet16 still sent {last - t_req:.4f} s later")
        # not vacuous: the flood used Ethernet16 before the request and went on after it (on the
        # other uplinks), so Ethernet16 would have carried frames after it had it stayed up
        later = [float(p.time) for c in self.caps for p in rdpcap(c)
                 if 2 <= int.from_bytes(bytes(p)[51:54], "big") < 80 and float(p.time) > t_req + 0.02]
        self.assertTrue(self.read_placement_range(2, 80, uplink=1), "flood on Ethernet16 before")
        self.assertTrue(later, "the flood went on after the request")
        if os.environ.get("ROCESW_TEST_VERBOSE"):
            print(f"last frame on the failed link {1e3 * (last - t_req):.2f} ms after the request")
        # back up: the member takes its share of buckets back from the others, so the only
        # flows that move are flows that go to Ethernet16
        self.rocesw("set", "port", "Ethernet16", "up")
        ecmp2 = {m["port"]: m["buckets"] for m in self.show("ecmp")[0]["members"]}
        self.assertEqual(ecmp2["Ethernet16"], 64)
        self.send(frames(200))
        again = self.placement(200)
        self.assertEqual(len(again), N_QP)
        for qp, u in again.items():
            self.assertTrue(u == after[qp] or u == 1, f"QP {qp:#x} moved {after[qp]} -> {u}")

    def test_2_routes(self):
        gen = self.show("config")["generation"]
        self.rocesw("set", "route", "10.3.0.0/16", "nexthop", "10.255.0.7")
        self.send(frames(300, dst="10.3.0.9"))
        self.assertEqual(set(self.placement(300).values()), {3}, "the new route is used")
        r = self.rocesw("set", "route", "10.3.0.0/99", "nexthop", "10.255.0.7", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("\"prefix\" must be an IPv4 or IPv6 prefix", r.stderr)
        r = self.rocesw("set", "route", "10.4.0.0/16", "group", "nope", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope", r.stderr)
        self.assertEqual(self.show("config")["generation"], gen + 1, "refused: nothing changed")
        self.rocesw("del", "route", "10.3.0.0/16")
        self.assertNotIn("10.3.0.0/16", [x["prefix"] for x in self.show("routes")])

    def test_3_garbage_and_strangers(self):
        before = self.show("counters")["ports"][0]["rx_packets"]
        cases = [
            (b"garbage", "not JSON"),
            (b'{"v":1,"op":"sh', "not JSON"),
            (b"[1,2]", "a request is a JSON object"),
            (b'{"v":9,"op":"show"}', "protocol version"),
            (b'{"v":1}', "missing \"op\""),
            (b'{"v":1,"op":"reboot"}', "unknown op 'reboot'"),
            (b'{"v":1,"op":"show","what":"everything"}', "\"what\" must be one of"),
            (b'{"v":1,"op":"set_port","port":"Ethernet99","admin":"down"}', "no port named"),
            (b'{"v":1,"op":"pfc_storm","port":"Ethernet8","priority":9,"on":true}', "0-7"),
            (b"{" + b" " * 70000 + b"}", "exceeds the limit of 65536"),
        ]
        for raw, why in cases:
            reply = request(self.sock, raw=raw)
            self.assertFalse(reply["ok"], raw[:40])
            self.assertIn(why, reply["error"], raw[:40])
        # forwarding went on meanwhile
        self.send(frames(400))
        self.assertEqual(len(self.placement(400)), N_QP)
        self.assertGreaterEqual(self.show("counters")["ports"][0]["rx_packets"], before + N_QP)
        # a user who is neither root nor in the control group
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                  "/usr/bin/python3", "-c",
                  "import socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                  "try:\n s.connect(sys.argv[1])\nexcept OSError as e:\n print('connect', e.errno)"
                  "\n sys.exit(0)\nprint(s.recv(4096).decode())",
                  self.sock]
        r = subprocess.run(nobody, capture_output=True, text=True)
        self.assertIn("connect 13", r.stdout, r.stderr)  # EACCES: the socket is 0660
        os.chmod(self.sock, 0o666)
        try:
            r = subprocess.run(nobody, capture_output=True, text=True)
        finally:
            os.chmod(self.sock, 0o660)
        self.assertIn("refused: peer uid 65534 is not root and not in the control group", r.stdout)
        self.assertGreaterEqual(self.show("control")["refused_peers"], 1)

    def test_5_hash_explain_live(self):
        """`rocesw hash explain --src ... --qp ...` on the live tables names, for every QP, the
        uplink its packets were captured on; the key is the QP's 3 bytes and the hash their
        CRC-16/XMODEM computed here, the bucket hash mod 256."""
        from test_ingress import crc16_xmodem
        self.send(frames(600))
        seen = self.placement(600)
        self.assertEqual(len(seen), N_QP)
        for qp, uplink in seen.items():
            r = self.rocesw("hash", "explain", "--src", "10.1.0.1", "--dst", "10.2.0.1",
                            "--sport", "49152", "--qp", str(qp), "--in-port", "Ethernet0", "--json")
            e = json.loads(r.stdout)
            self.assertEqual(e["egress_port"], f"Ethernet{8 * (uplink + 1)}", hex(qp))
            self.assertEqual([f["bytes"] for f in e["key"]], [f"{qp:06x}"])
            h = crc16_xmodem(qp.to_bytes(3, "big"))
            self.assertEqual((e["hash"], e["bucket"]), (h, h % 256))
        r = self.rocesw("hash", "explain", "--src", "10.1.0.1", "--dst", "10.77.0.1", "--json")
        self.assertEqual(json.loads(r.stdout)["drop"], "lpm4_miss")

    def test_6_pfc_storm_trips_the_watchdog(self):
        """`set pfc-storm Ethernet8 3 on` pauses queue 3 as a peer's endless XOFF would: SONiC's
        watchdog defaults (detection 200 ms, polled every 200 ms) call it a storm within 0.4 s
        and, once it is off, restore the queue within restoration + poll (0.4 s)."""
        def wd(key):
            q = next(p for p in self.show("watchdog") if p["name"] == "Ethernet8")["queues"][3]
            return q[key]
        det0, res0 = wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"), wd("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED")
        self.rocesw("set", "pfc-storm", "Ethernet8", "3", "on")
        time.sleep(1.0)
        self.assertEqual(wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"), det0 + 1)
        pfc = next(p for p in self.show("pfc") if p["name"] == "Ethernet8")["pfc"]
        self.assertGreater(pfc["SAI_PORT_STAT_PFC_3_RX_PKTS"], 0)
        self.rocesw("set", "pfc-storm", "Ethernet8", "3", "off")
        time.sleep(1.0)
        self.assertEqual(wd("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"), res0 + 1)
        r = self.rocesw("set", "pfc-storm", "Ethernet8", "9", "on", check=False)
        self.assertEqual(r.returncode, 2)

    def test_7_silent_clients_do_not_hold_the_socket(self):
        """16 clients that connect and say nothing take every slot: a 17th is told it is busy, yet
        forwarding goes on; after --control-idle 2 s they are let go and requests work again."""
        idle = []
        for _ in range(16):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(self.sock)
            idle.append(s)
        time.sleep(0.3)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(self.sock)
        got = s.recv(4096)  # turned away with the reason, unasked
        s.close()
        self.assertIn(b"busy: 16 clients connected", got, "no slot for a 17th client")
        self.send(frames(700))
        self.assertEqual(len(self.placement(700)), N_QP, "forwarding went on")
        time.sleep(3.5)
        ctl = self.show("control")
        self.assertGreaterEqual(ctl["idle_clients"], 16)
        self.assertGreaterEqual(ctl["too_many_clients"], 1)
        for s in idle:
            s.close()

    def test_4_telemetry_equals_show(self):
        self.send(frames(500))
        time.sleep(0.5)
        show = self.show("counters")

        def tel(cmd):
            r = subprocess.run(["dpdk-telemetry.py", "-f", PREFIX], input=cmd + "\n",
                               capture_output=True, text=True, timeout=30)
            start = r.stdout.index("{")
            return json.loads(r.stdout[start:r.stdout.rindex("}") + 1])[cmd.split(",")[0]]

        c = tel("/rocesw/counters")
        for k in ("received", "transmitted", "dropped", "consumed"):
            self.assertEqual(c[k], show["conservation"][k], k)
        for p in show["ports"]:
            t = tel(f"/rocesw/port_stats,{p['name']}")
            for k in ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes"):
                self.assertEqual(t[k], p[k], (p["name"], k))
            for k, v in p["pfc"].items():
                if k.startswith("SAI_PORT_STAT_PFC_") and k.endswith("_PKTS"):
                    self.assertEqual(t[k], v, (p["name"], k))
        self.assertEqual(tel("/rocesw/ports"), [p["name"] for p in show["ports"]])


if __name__ == "__main__":
    unittest.main(verbosity=1)
