"""Live: roceswd runs rocesw-dataplane for a config (ROCESWD table: EAL arguments, control socket,
metrics port) in a namespace lab of one host and 4 ECMP uplinks.

- A config change saved while traffic flows is applied by reload: every frame sent during it
  reaches an uplink (the captures count them) and the new route carries the next packets.
- A broken config saved is refused with its error in the log; the running config keeps
  forwarding.
- Killing the dataplane: roceswd restarts and reprograms it (from the last applied config) and
  traffic flows again; the restart is logged and counted.
- GET /metrics returns the counters `rocesw show counters` reports."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import BUILD, ROCESW, tmpdir, write_pcap  # noqa: E402
from labnet import HOST_MAC, ROUTER_MAC, UPLINK_MACS, Lab, four_uplink_config  # noqa: E402

ROCESWD = os.path.join(BUILD, "roceswd")
PORT = 19477
HASH = """HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf: [{base: L4, offset: 13, length: 3, match: {ip_protocol: 17, l4_dst_port: 4791}}]"""


def frames(psn, dst="10.2.0.1", n=32):
    return [rocepkt.roce(src="10.1.0.1", dst=dst, sport=49152, dqp=0x1000 + qp, psn=psn,
                         smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(64)) for qp in range(n)]


class LiveRoceswd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("the live tests need root (network namespaces); CI runs as root")
        cls.dir = tmpdir()
        cls.sock = os.path.join(cls.dir, "run", "dp.sock")
        cls.cfg = os.path.join(cls.dir, "switch.yaml")
        cls.base = ("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 1024 --no-pci -l 0-1 "
                    "--no-shconf --file-prefix rswd --log-level error\", "
                    f"control_socket: {cls.sock}, metrics_port: {PORT}}}\n" +
                    four_uplink_config("rswd", "live-roceswd", HASH, "hash_policy: dest_qp"))
        with open(cls.cfg, "w") as f:
            f.write(cls.base)
        cls.lab = Lab("rswd")
        try:
            cls.h0 = cls.lab.host("h0", "rswd-h0", HOST_MAC)
            cls.ups = [cls.lab.host(f"u{i}", f"rswd-u{i}", UPLINK_MACS[i]) for i in range(4)]
            cls.log = open(os.path.join(cls.dir, "roceswd.log"), "w+")
            cls.daemon = cls.lab.start([ROCESWD, "--config", cls.cfg, "--foreground"],
                                       stdout=cls.log, stderr=cls.log)
            cls.wait_log("running: config")
            cls.caps = [os.path.join(cls.dir, f"u{i}.pcap") for i in range(4)]
            cls.tcpdumps = [cls.lab.capture(ns, p) for ns, p in zip(cls.ups, cls.caps)]
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        Lab.stop(cls.daemon, signal.SIGTERM)
        cls.lab.close()
        cls.log.close()

    @classmethod
    def wait_log(cls, text, count=1, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(cls.log.name) as f:
                if f.read().count(text) >= count:
                    return
            time.sleep(0.1)
        with open(cls.log.name) as f:
            raise AssertionError(f"'{text}' x{count} not in the log: {f.read()}")

    @classmethod
    def log_count(cls, text):
        with open(cls.log.name) as f:
            return f.read().count(text)

    def send(self, pkts, gap="0.0005", wait=True):
        path = write_pcap(os.path.join(self.dir, f"send-{time.time_ns()}.pcap"), pkts)
        p = subprocess.Popen(["ip", "netns", "exec", self.h0, "/usr/bin/python3",
                              os.path.join(HERE, "send_frames.py"), path, gap])
        if wait:
            self.assertEqual(p.wait(120), 0)
        return p

    def captured(self, pred, expect, timeout=5):
        """Frames on each uplink matching pred, once `expect` of them arrived (or timeout)."""
        deadline = time.time() + timeout
        while True:
            per = [[bytes(p) for p in rdpcap(c) if pred(bytes(p))] if os.path.getsize(c) > 24
                   else [] for c in self.caps]
            if sum(map(len, per)) >= expect or time.time() > deadline:
                return per

    @staticmethod
    def psn_is(lo, hi):
        return lambda raw: (raw[12:14] == b"\x08\x00" and raw[23] == 17 and
                            lo <= int.from_bytes(raw[51:54], "big") < hi)

    def show(self, what):
        r = subprocess.run([ROCESW, "show", what, "--json", "--socket", self.sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_1_reload_under_traffic(self):
        flood = [f for psn in range(1000, 1030) for f in frames(psn)]
        sender = self.send(flood, gap="0.0003", wait=False)
        time.sleep(0.2)
        with open(self.cfg, "w") as f:
            f.write(self.base + '  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')
        self.wait_log("reloaded:")
        self.assertEqual(sender.wait(120), 0)
        per = self.captured(self.psn_is(1000, 1030), len(flood))
        self.assertEqual(sum(map(len, per)), len(flood), "every frame sent during the reload")
        self.send(frames(2000, dst="10.3.0.9"))
        per = self.captured(self.psn_is(2000, 2001), 32)
        self.assertEqual([len(p) for p in per], [0, 0, 0, 32], "the new route, to u3")
        routes = [r["prefix"] for r in self.show("routes")]
        self.assertIn("10.3.0.0/16", routes)

    def test_2_broken_reload_keeps_forwarding(self):
        gen = self.show("config")["generation"]
        with open(self.cfg, "a") as f:
            f.write('  "10.4.0.0/16": {nexthop_group: nosuchgroup}\n')
        self.wait_log("reload refused, the running config stays:")
        with open(self.log.name) as f:
            self.assertIn("nosuchgroup", f.read())
        self.assertEqual(self.show("config")["generation"], gen, "nothing applied")
        self.send(frames(3000))
        per = self.captured(self.psn_is(3000, 3001), 32)
        self.assertEqual(sum(map(len, per)), 32, "still forwarding")
        ok = self.log_count("reloaded:")
        with open(self.cfg, "w") as f:  # back to a good file for the next tests
            f.write(self.base + '  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')
        self.wait_log("reloaded:", count=ok + 1)

    def test_3_dataplane_killed_is_restarted(self):
        pid = int(subprocess.run(["pgrep", "-f", "file-prefix rswd"], capture_output=True,
                                 text=True, check=True).stdout.split()[0])
        os.kill(pid, signal.SIGKILL)
        self.wait_log("restarting the dataplane (restart 1)")
        self.wait_log("dataplane answers on", count=2)
        self.send(frames(4000, dst="10.3.0.9"))
        per = self.captured(self.psn_is(4000, 4001), 32)
        self.assertEqual([len(p) for p in per], [0, 0, 0, 32],
                         "reprogrammed with the last applied config (its 10.3/16 route)")
        text = urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=10).read().decode()
        self.assertIn("rocesw_dataplane_restarts_total 1\n", text)

    def test_4_metrics_equal_show_counters(self):
        self.send(frames(5000))
        time.sleep(0.5)
        show = self.show("counters")
        text = urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=10).read().decode()
        values = {}
        for line in text.splitlines():
            m = re.match(r'^(rocesw_[a-z_]+)(\{[^}]*\})? (\d+)$', line)
            if m:
                values[(m.group(1), m.group(2) or "")] = int(m.group(3))
        for p in show["ports"]:
            lab = f'{{port="{p["name"]}"}}'
            for key in ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes"):
                self.assertEqual(values[(f"rocesw_port_{key}_total", lab)], p[key], (p["name"], key))
            for prio in range(8):
                lab = f'{{port="{p["name"]}",priority="{prio}"}}'
                self.assertEqual(values[("rocesw_pfc_rx_frames_total", lab)],
                                 p["pfc"][f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS"])
            for q in p["queues"]:
                lab = f'{{port="{p["name"]}",queue="{q["queue"]}"}}'
                self.assertEqual(values[("rocesw_queue_packets_total", lab)],
                                 q["SAI_QUEUE_STAT_PACKETS"])
        cons = show["conservation"]
        self.assertEqual(values[("rocesw_packets_received_total", "")], cons["received"])
        r = urllib.request.Request(f"http://127.0.0.1:{PORT}/other")
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(r, timeout=10)
        self.assertEqual(e.exception.code, 404)


if __name__ == "__main__":
    unittest.main(verbosity=1)
