"""Live: rocesw-dataplane with its control socket, a host sending RoCEv2 to 4 ECMP uplinks
(destination-QP hashing, resilient buckets) in network namespaces.

- `rocesw set port Ethernet16 down` while a flood (running until the test stops it) crosses the
  switch: from the uplinks' captures, every flow that was on Ethernet16 moves and every other
  flow stays where it was; the bucket table (show ecmp) gives Ethernet16's buckets to the others
  and nothing else changes; once the reply is in, Ethernet16's counter stops while the others
  go on, and its last frame left no later than 2 ms after the first frame of a moved flow on
  another uplink (capture timestamps; 2 ms is four times what the switch can hold for one
  10 Gb/s port); `up` brings it back.
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
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import ROCESW, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Control, Flood, Lab,  # noqa: E402
                    four_uplink_config, pcap_count, send, wait_captured, wait_drained,
                    wait_for_line, wait_until)

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
        require_root()
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
            cls.dp = cls.lab.start(dataplane_cmd(PREFIX, "--config", cfg, "--control-socket",
                                                 cls.sock, "--control-idle", "2"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(cls.dp.stderr, "forwarding")
            cls.ctl = Control(cls.sock)
            cls.caps = [os.path.join(cls.dir, f"u{i}.pcap") for i in range(4)]
            cls.tcpdumps = [cls.lab.capture(ns, p) for ns, p in zip(cls.ups, cls.caps)]
            cls.tx = cls.lab.socket(cls.h0)
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def settle(self):
        """Waits until every frame the host sent has left the switch (counters) and tcpdump has
        written each uplink's frames (as many as the switch's tx counter for that port)."""
        c = wait_drained(self.ctl, self.sent_total)
        for i, cap in enumerate(self.caps):
            wait_captured(cap, self.port_tx(c, i))
        return c

    @staticmethod
    def port_tx(c, uplink):
        return next(p["tx_packets"] for p in c["ports"] if p["name"] == f"Ethernet{8 * (uplink + 1)}")

    sent_total = 0

    def send(self, pkts):
        LiveControl.sent_total += send(self.tx, pkts)
        self.settle()

    def rocesw(self, *args, check=True):
        r = subprocess.run([ROCESW, *args, "--socket", self.sock], capture_output=True, text=True)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def show(self, what):
        return json.loads(self.rocesw("show", what, "--json").stdout)

    def placement(self, psn):
        """{qp: uplink index} of the frames with this PSN in the captures (read once settled)."""
        return self.read_placement(psn)

    def read_placement_range(self, lo, hi, uplink):
        """Frames with lo <= PSN < hi captured on one uplink so far."""
        cap = self.caps[uplink]
        if pcap_count(cap) == 0:
            return []
        return [p for p in rdpcap(cap) if bytes(p)[12:14] == b"\x08\x00" and
                lo <= int.from_bytes(bytes(p)[51:54], "big") < hi]

    def read_placement(self, psn):
        out = {}
        for i, cap in enumerate(self.caps):
            if pcap_count(cap) == 0:
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
        # a flood over all QPs (PSNs 2..79 round and round, one frame per 0.2 ms) that runs until
        # the test stops it; the request goes once the switch's counter shows it on Ethernet16
        c0 = self.ctl.counters()
        flood = Flood(self.lab, self.tx, [f for psn in range(2, 80) for f in frames(psn)], 0.0002)
        wait_until(lambda: self.port_tx(self.ctl.counters(), 1) >= self.port_tx(c0, 1) + 64,
                   "the flood on Ethernet16")
        reply = request(self.sock, {"v": 1, "id": 7, "op": "set_port", "port": "Ethernet16",
                                    "admin": "down"})
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(reply["id"], 7)
        # the reply comes after every worker has let go of the old tables: from here on nothing
        # new is routed to Ethernet16, while the flood goes on over the other three
        c1 = self.ctl.counters()
        others = lambda c: sum(self.port_tx(c, u) for u in (0, 2, 3))  # noqa: E731
        wait_until(lambda: others(self.ctl.counters()) >= others(c1) + 500,
                   "500 flood frames on the other uplinks after the request")
        c2 = self.ctl.counters()
        LiveControl.sent_total += flood.stop()
        self.settle()
        c3 = self.ctl.counters()
        self.assertEqual(self.port_tx(c3, 1), self.port_tx(c2, 1),
                         "Ethernet16 sent nothing while 500 frames went elsewhere")
        # what it sent after the reply is what it held then: at most a burst (32) per queue
        self.assertLessEqual(self.port_tx(c3, 1) - self.port_tx(c1, 1), 32)
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
        # the switch-over as the wire saw it (capture timestamps, one clock): Ethernet16's last
        # flood frame left at most 2 ms after the first flood frame of one of its flows on
        # another uplink. The switch holds at most a burst per queue for a 10 Gb/s port (well
        # under 0.5 ms of wire time); 2 ms is the documented tolerance.
        flood_on = lambda u: self.read_placement_range(2, 80, uplink=u)  # noqa: E731
        last16 = max(float(p.time) for p in flood_on(1))

        def qp_of(p):
            return int.from_bytes(bytes(p)[14 + 20 + 8 + 5:14 + 20 + 8 + 8], "big")
        moved = [float(p.time) for u in (0, 2, 3) for p in flood_on(u) if qp_of(p) in on1]
        self.assertTrue(moved, "the flood went on after the request, its flows moved")
        first_moved = min(moved)
        self.assertLess(last16 - first_moved, 0.002,
                        f"Ethernet16 still sent {last16 - first_moved:.4f} s after the switch-over")
        if os.environ.get("ROCESW_TEST_VERBOSE"):
            print(f"last frame on the failed link {1e3 * (last16 - first_moved):.3f} ms after "
                  f"the first moved one")
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
        watchdog defaults (detection 200 ms, polled every 200 ms) call it a storm, once, and
        once it is off restore the queue (awaited on the watchdog's counters, read on the
        control socket rather than by a process per look, which would take CPU from the
        worker)."""
        def wd(key):
            q = next(p for p in self.ctl.show("watchdog") if p["name"] == "Ethernet8")["queues"][3]
            return q[key]
        det0, res0 = wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"), wd("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED")
        self.rocesw("set", "pfc-storm", "Ethernet8", "3", "on")
        try:
            wait_until(lambda: wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED") > det0,
                       "the storm detected", every=0.1)
            self.assertEqual(wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"), det0 + 1, "one storm")
            pfc = next(p for p in self.show("pfc") if p["name"] == "Ethernet8")["pfc"]
            self.assertGreater(pfc["SAI_PORT_STAT_PFC_3_RX_PKTS"], 0)
        finally:
            # whatever happened, the tests after this one get a queue that is not paused
            self.rocesw("set", "pfc-storm", "Ethernet8", "3", "off")
        wait_until(lambda: wd("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED") > res0, "the queue restored")
        self.assertEqual(wd("PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"), res0 + 1)
        self.assertEqual(wd("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"), det0 + 1, "still one storm")
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
        # the 17th queues behind them in the listen backlog, so it is accepted after them
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(self.sock)
        got = s.recv(4096)  # turned away with the reason, unasked
        s.close()
        self.assertIn(b"busy: 16 clients connected", got, "no slot for a 17th client")
        # the control socket is full, so forwarding is watched on the captures alone
        n0 = sum(pcap_count(c) for c in self.caps)
        LiveControl.sent_total += send(self.tx, frames(700))
        wait_until(lambda: sum(pcap_count(c) for c in self.caps) >= n0 + N_QP,
                   "the frames sent while every slot is taken")
        self.assertEqual(len(self.placement(700)), N_QP, "forwarding went on")

        def control_back():
            # until --control-idle has passed, the CLI is turned away like the 17th client and
            # says why, whether the dataplane closed before or after its request went
            r = self.rocesw("show", "control", "--json", check=False)
            if r.returncode != 0:
                self.assertIn("busy: 16 clients connected", r.stderr)
                return None
            c = json.loads(r.stdout)
            return c if c["idle_clients"] >= 16 else None
        ctl = wait_until(control_back, "the silent clients let go after --control-idle 2")
        self.assertGreaterEqual(ctl["idle_clients"], 16)
        self.assertGreaterEqual(ctl["too_many_clients"], 1)
        for s in idle:
            s.close()

    def test_4_telemetry_equals_show(self):
        self.send(frames(500))
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
