"""Live: roceswd runs rocesw-dataplane for a config (ROCESWD table: EAL arguments, control socket,
metrics port) in a namespace lab of one host and 4 ECMP uplinks.

- A config change saved while traffic flows is applied by reload: every frame sent during it
  reaches an uplink (the captures count them) and the new route carries the next packets.
- A broken config saved is refused with its error in the log; the running config keeps
  forwarding.
- Killing the dataplane: roceswd restarts and reprograms it (from the last applied config) and
  traffic flows again; the restart is logged and counted. Killed before it ever answered, it is
  restarted all the same, with the backoff doubling.
- GET /metrics returns the counters `rocesw show counters` reports; HEAD, 405, 404; promtool
  accepts the page, label values with quote, backslash and newline included.
- A client trickling its request a byte every 1.5 s holds a connection while another scrape is
  answered and a killed dataplane is restarted; it is cut at metrics_timeout.
- A reload the dataplane takes longer than 30 s to answer (stopped with SIGSTOP) is awaited,
  not declared failed; killed mid-reload, the dataplane restarts on the last applied config and
  running-config says so.
- A config replaced by rename and one edited in place are each reloaded once, never half-read,
  under a flood that loses nothing.
- roceswd SIGKILLed and started again re-attaches to the dataplane, which forwards a flood
  throughout; under NOTIFY_SOCKET it reports READY=1 and pings the watchdog.
- SIGTERM stops roceswd with status 0 (under the ASan build: no leak)."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.request
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.utils import rdpcap  # noqa: E402

import rocepkt  # noqa: E402
from common import BUILD, ROCESW, require_root, tmpdir, write_pcap  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Lab, four_uplink_config,  # noqa: E402
                    wait_in_file)

ROCESWD = os.path.join(BUILD, "roceswd")
PORT = 19477
METRICS_TIMEOUT = 5
HASH = """HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf: [{base: L4, offset: 13, length: 3, match: {ip_protocol: 17, l4_dst_port: 4791}}]"""
HOSTILE = 'we"ird\\grp\nx'  # a group name with a quote, a backslash and a newline
HOSTILE_YAML = '"we\\"ird\\\\grp\\nx"'
ARS_TABLES = ("ARS_PROFILE:\n  default: {random_seed: 3}\n"
              "ARS_OBJECT:\n  spray: {assign_mode: per_packet_random, match_l4_dst_port: 4791}\n")

# Sends one frame over and over, its BTH PSN counting up from the first, until SIGTERM; prints
# how many it sent. Runs in the host's namespace.
FLOOD = r"""
import signal, socket, sys, time
frame = bytearray(open(sys.argv[1], "rb").read())
gap, psn0 = float(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
n = 0
print("flooding", flush=True)
while not stop:
    frame[51:54] = (psn0 + n).to_bytes(3, "big")
    s.send(frame)
    n += 1
    time.sleep(gap)
print(n, flush=True)
"""


def frames(psn, dst="10.2.0.1", n=32):
    return [rocepkt.roce(src="10.1.0.1", dst=dst, sport=49152, dqp=0x1000 + qp, psn=psn,
                         smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(64)) for qp in range(n)]


def log_time(line):
    """The UTC time stamp roceswd puts at the start of a log line, as epoch seconds."""
    return datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc).timestamp()


def prom_escape(v):
    """A label value escaped as the Prometheus text format says (written here from its spec)."""
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def figure(text):
    """A measured figure, for docs/testing.md (in the test log)."""
    print(f"figure: {text}", file=sys.stderr, flush=True)


def scrape(method="GET", path="/metrics"):
    r = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method)
    with urllib.request.urlopen(r, timeout=30) as resp:
        return resp.status, dict(resp.headers), resp.read().decode()


def metric(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


class LiveRoceswd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        cls.sock = os.path.join(cls.dir, "run", "dp.sock")
        cls.running = os.path.join(cls.dir, "run", "running-config.yaml")
        cls.cfg = os.path.join(cls.dir, "switch.yaml")
        cls.base = ("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 1024 --no-pci -l 0-1 "
                    "--no-shconf --file-prefix rswd --log-level error\", "
                    f"control_socket: {cls.sock}, metrics_port: {PORT}, "
                    f"metrics_timeout: {METRICS_TIMEOUT}}}\n" +
                    four_uplink_config("rswd", "live-roceswd", HASH, "hash_policy: dest_qp"))
        with open(cls.cfg, "w") as f:
            f.write(cls.base)
        cls.flood_py = os.path.join(cls.dir, "flood.py")
        with open(cls.flood_py, "w") as f:
            f.write(FLOOD)
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
            cls.wait_log("dataplane answers on")
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
        wait_in_file(cls.log.name, text, count, timeout)

    @classmethod
    def log_count(cls, text):
        with open(cls.log.name) as f:
            return f.read().count(text)

    @classmethod
    def log_lines(cls, text):
        with open(cls.log.name) as f:
            return [line for line in f if text in line]

    def write_config(self, routes="", group="", tables=""):
        """The base config plus STATIC_ROUTE lines, a NEXTHOP_GROUP line and whole tables."""
        text = tables + self.base.replace("NEXTHOP_GROUP:\n", "NEXTHOP_GROUP:\n" + group) + routes
        with open(self.cfg, "w") as f:
            f.write(text)
        return text

    def send(self, pkts, gap="0.0005", wait=True):
        path = write_pcap(os.path.join(self.dir, f"send-{time.time_ns()}.pcap"), pkts)
        p = subprocess.Popen(["ip", "netns", "exec", self.h0, "/usr/bin/python3",
                              os.path.join(HERE, "send_frames.py"), path, gap])
        if wait:
            self.assertEqual(p.wait(120), 0)
        return p

    def flood(self, psn0, dst="10.2.0.1", gap="0.001"):
        """A flood from h0 that runs until flood_stop(); its first frame already sent."""
        tmpl = os.path.join(self.dir, f"flood-{psn0}.bin")
        with open(tmpl, "wb") as f:
            f.write(bytes(frames(0, dst=dst, n=1)[0]))
        p = subprocess.Popen(["ip", "netns", "exec", self.h0, "/usr/bin/python3", self.flood_py,
                              tmpl, gap, str(psn0)], stdout=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline().strip(), "flooding")
        return p

    def flood_stop(self, p):
        p.send_signal(signal.SIGTERM)
        out = p.stdout.read()
        self.assertEqual(p.wait(30), 0)
        return int(out.split()[-1])

    def assert_all_delivered(self, psn0, sent):
        """Conservation: each frame of the flood reached an uplink exactly once, or the
        dataplane counted its drop."""
        per = self.captured(self.psn_is(psn0, psn0 + sent), sent)
        psns = sorted(int.from_bytes(raw[51:54], "big") for p in per for raw in p)
        dropped = self.show("counters")["conservation"]["dropped"]
        self.assertEqual(len(psns), len(set(psns)), "no frame twice")
        self.assertEqual(len(psns), sent,
                         f"every one of the {sent} frames delivered ({dropped} counted drops "
                         f"in this dataplane); missing from {psn0}: "
                         f"{sorted(set(range(psn0, psn0 + sent)) - set(psns))[:10]}")

    def captured(self, pred, expect, timeout=10):
        """Frames on each uplink matching pred, once `expect` of them arrived (or timeout)."""
        deadline = time.time() + timeout
        while True:
            per = [[bytes(p) for p in rdpcap(c) if pred(bytes(p))] if os.path.getsize(c) > 24
                   else [] for c in self.caps]
            if sum(map(len, per)) >= expect or time.time() > deadline:
                return per
            time.sleep(0.1)

    @staticmethod
    def psn_is(lo, hi):
        return lambda raw: (raw[12:14] == b"\x08\x00" and raw[23] == 17 and
                            lo <= int.from_bytes(raw[51:54], "big") < hi)

    def show(self, what):
        r = subprocess.run([ROCESW, "show", what, "--json", "--socket", self.sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def dataplane_pids(self):
        r = subprocess.run(["pgrep", "-f", "file-prefix rswd"], capture_output=True, text=True)
        return [int(p) for p in r.stdout.split()]

    def test_01_reload_under_traffic(self):
        flood = [f for psn in range(1000, 1030) for f in frames(psn)]
        sender = self.send(flood, gap="0.0003", wait=False)
        time.sleep(0.2)
        self.write_config('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')
        self.wait_log("reloaded:")
        self.assertEqual(sender.wait(120), 0)
        per = self.captured(self.psn_is(1000, 1030), len(flood))
        self.assertEqual(sum(map(len, per)), len(flood), "every frame sent during the reload")
        self.send(frames(2000, dst="10.3.0.9"))
        per = self.captured(self.psn_is(2000, 2001), 32)
        self.assertEqual([len(p) for p in per], [0, 0, 0, 32], "the new route, to u3")
        routes = [r["prefix"] for r in self.show("routes")]
        self.assertIn("10.3.0.0/16", routes)
        # running-config is what the dataplane applied, at the generation it reported
        with open(self.running) as f, open(self.cfg) as g:
            self.assertEqual(f.read(), g.read())
        gen = self.show("config")["generation"]
        self.assertIn(f"generation {gen},", self.log_lines("reloaded:")[-1])
        self.assertEqual(metric(scrape()[2], "rocesw_config_generation"), gen)

    def test_02_broken_reload_keeps_forwarding(self):
        gen = self.show("config")["generation"]
        with open(self.cfg, "a") as f:
            f.write('  "10.4.0.0/16": {nexthop_group: nosuchgroup}\n')
        self.wait_log("reload refused, the running config stays:")
        with open(self.log.name) as f:
            self.assertIn("nosuchgroup", f.read())
        self.assertEqual(self.show("config")["generation"], gen, "nothing applied")
        with open(self.running) as f:
            self.assertNotIn("nosuchgroup", f.read())
        self.send(frames(3000))
        per = self.captured(self.psn_is(3000, 3001), 32)
        self.assertEqual(sum(map(len, per)), 32, "still forwarding")
        ok = self.log_count("reloaded:")
        self.write_config('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')  # good again
        self.wait_log("reloaded:", count=ok + 1)

    def test_03_dataplane_killed_is_restarted(self):
        restarts = metric(scrape()[2], "rocesw_dataplane_restarts_total")
        os.kill(self.dataplane_pids()[0], signal.SIGKILL)
        self.wait_log(f"restarting the dataplane (restart {int(restarts) + 1})")
        answers = self.log_count("dataplane answers on")
        self.wait_log("dataplane answers on", count=answers + 1)
        self.send(frames(4000, dst="10.3.0.9"))
        per = self.captured(self.psn_is(4000, 4001), 32)
        self.assertEqual([len(p) for p in per], [0, 0, 0, 32],
                         "reprogrammed with the last applied config (its 10.3/16 route)")
        self.assertEqual(metric(scrape()[2], "rocesw_dataplane_restarts_total"), restarts + 1)

    def test_04_metrics_equal_show_counters(self):
        self.send(frames(5000))
        time.sleep(0.5)
        show = self.show("counters")
        text = scrape()[2]
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

    def test_05_http_methods_and_paths(self):
        status, headers, body = scrape()
        self.assertEqual(status, 200)
        self.assertIn('rocesw_build_info{version="', body)
        status, headers, head = scrape("HEAD")
        self.assertEqual((status, head), (200, ""), "HEAD: GET's answer without the body")
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        with self.assertRaises(urllib.error.HTTPError) as e:
            scrape(path="/other")
        self.assertEqual(e.exception.code, 404)
        with self.assertRaises(urllib.error.HTTPError) as e:
            scrape("POST")
        self.assertEqual(e.exception.code, 405)
        self.assertEqual(e.exception.headers["Allow"], "GET, HEAD")

    def test_06_hostile_names_promtool(self):
        ok = self.log_count("reloaded:")
        self.write_config('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n'
                          f'  "10.7.0.0/16": {{nexthop_group: {HOSTILE_YAML}}}\n',
                          group=f'  {HOSTILE_YAML}: {{nexthop: "10.255.0.1,10.255.0.3", '
                          'ars_object: spray}\n', tables=ARS_TABLES)
        self.wait_log("reloaded:", count=ok + 1)
        self.send(frames(6000, dst="10.7.0.1", n=8))
        self.captured(self.psn_is(6000, 6001), 8)
        text = scrape()[2]
        lines = [line for line in text.splitlines()
                 if line.startswith('rocesw_ecmp_member_packets_total{group="we')]
        self.assertEqual(len(lines), 2, text)
        for line in lines:
            self.assertTrue(line.startswith('rocesw_ecmp_member_packets_total{group="'
                                            + prom_escape(HOSTILE) + '",member="'), line)
        total = sum(int(line.split()[-1]) for line in lines)
        self.assertEqual(total, 8, "the 8 frames to 10.7/16 counted on the group's members")
        # the group sprays every RoCE packet (docs/ars.md): ARS decided the 8, dropped none
        lab = '{group="' + prom_escape(HOSTILE) + '",mode="per_packet_random"}'
        self.assertIn(f"rocesw_ars_packets_total{lab} 8\n", text)
        self.assertIn(f"rocesw_ars_packet_drops_total{lab} 0\n", text)
        self.assertNotIn("microseconds", text)
        self.assertIn('rocesw_pfc_rx_pause_seconds_total{port="Ethernet0",priority="0"} 0.000000',
                      text)
        families = set(re.findall(r"^(rocesw_[a-z_]+)", text, re.M))
        for fam in families:
            self.assertIn(f"# HELP {fam} ", text)
            self.assertIn(f"# TYPE {fam} ", text)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_07_trickling_client_blocks_nothing(self):
        """A client sends its request a byte every 1.5 s, reconnecting when cut; meanwhile a
        scrape is answered and a killed dataplane comes back."""
        stop = threading.Event()
        conns = []  # (opened, closed by the server, bytes it managed to send)

        def trickle():
            while not stop.is_set():
                s = socket.create_connection(("127.0.0.1", PORT))
                opened, sent = time.time(), 0
                req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096
                try:
                    for ch in req:
                        s.send(bytes([ch]))
                        sent += 1
                        if stop.wait(1.5):
                            break
                        s.setblocking(False)
                        try:
                            if s.recv(1) == b"":
                                break
                        except BlockingIOError:
                            pass
                        s.setblocking(True)
                except OSError:
                    pass
                conns.append((opened, time.time(), sent))
                s.close()

        cut0 = metric(scrape()[2], "rocesw_metrics_connections_cut_total")
        restarts = metric(scrape()[2], "rocesw_dataplane_restarts_total")
        t = threading.Thread(target=trickle)
        t.start()
        try:
            time.sleep(2)  # the trickler has sent a byte and waits for its next
            t0 = time.time()
            status, _, text = scrape()
            took = time.time() - t0
            self.assertEqual(status, 200)
            self.assertEqual(metric(text, "rocesw_dataplane_up"), 1)
            self.assertFalse(conns, "the trickler still on its first connection")
            self.assertLess(took, 1.5, "the scrape answered before the trickler's next byte")
            killed = time.time()
            answers = self.log_count("dataplane answers on")
            os.kill(self.dataplane_pids()[0], signal.SIGKILL)
            self.wait_log("dataplane answers on", count=answers + 1, timeout=120)
            line = self.log_lines("dataplane answers on")[-1]
            back = log_time(line)
            startup = float(re.search(r"([0-9.]+) s after its start", line).group(1))
            delay = float(re.search(r"restarting the dataplane in ([0-9.]+) s",
                                    self.log_lines("restarting the dataplane in")[-1]).group(1))
            # back within its backoff and its own start-up time (both read from this run's log),
            # 1 s of tolerance for noticing the death
            self.assertLess(back - killed, delay + startup + 1.0,
                            f"restarted {back - killed:.2f} s after the kill")
            figure(f"trickler held: scrape {took * 1000:.0f} ms; dataplane back "
                   f"{back - killed:.2f} s after SIGKILL (backoff {delay} s, start-up {startup} s)")
            self.assertEqual(metric(scrape()[2], "rocesw_dataplane_restarts_total"), restarts + 1)
            # the trickler is cut at the deadline, not when it is done
            deadline = time.time() + METRICS_TIMEOUT + 10
            while not conns and time.time() < deadline:
                time.sleep(0.1)
        finally:
            stop.set()
            t.join()
        opened, closed, sent = conns[0]
        self.assertLess(sent, 100, "cut long before its request was complete")
        self.assertGreaterEqual(closed - opened, METRICS_TIMEOUT - 0.1)
        self.assertLess(closed - opened, METRICS_TIMEOUT + 1.5 + 0.5,
                        "cut at the deadline (its 1.5 s between bytes, 0.5 s tolerance)")
        self.assertGreater(metric(scrape()[2], "rocesw_metrics_connections_cut_total"), cut0)
        figure(f"trickler cut after {closed - opened:.2f} s (deadline {METRICS_TIMEOUT} s), "
               f"{sent} bytes sent")

    def test_08_killed_before_it_answers(self):
        """A dataplane that dies before it ever answers is restarted too, the delay doubling."""
        restarts = metric(scrape()[2], "rocesw_dataplane_restarts_total")
        for attempt in range(5):
            answers = self.log_count("dataplane answers on")
            old = self.dataplane_pids()[0]
            os.kill(old, signal.SIGKILL)
            deadline = time.time() + 60
            while time.time() < deadline:
                new = [p for p in self.dataplane_pids() if p != old]
                if new:
                    break
                time.sleep(0.005)
            os.kill(new[0], signal.SIGSTOP)
            if self.log_count("dataplane answers on") == answers:
                break
            os.kill(new[0], signal.SIGCONT)  # it was faster than us: again
            self.wait_log("dataplane answers on", count=answers + 1)
            restarts += 1
        else:
            self.fail("never caught a dataplane before it answered")
        os.kill(new[0], signal.SIGKILL)
        self.wait_log("before it answered")
        self.wait_log("dataplane answers on", count=answers + 1, timeout=120)
        self.assertEqual(metric(scrape()[2], "rocesw_dataplane_restarts_total"), restarts + 2)
        delays = [float(re.search(r"in ([0-9.]+) s \(death (\d+)", line).group(1))
                  for line in self.log_lines("restarting the dataplane in")[-2:]]
        self.assertEqual(delays[1], 2 * delays[0], "the backoff doubles")
        figure(f"killed before it answered: backoff {delays[0]} s then {delays[1]} s")
        # each start came no sooner than its backoff after the death
        lines = self.log_lines("")
        for i, line in enumerate(lines):
            if "restarting the dataplane in" in line:
                d = float(re.search(r"in ([0-9.]+) s", line).group(1))
                start = next(ln for ln in lines[i:] if "restarting the dataplane (restart" in ln)
                self.assertGreaterEqual(log_time(start) - log_time(line), d - 0.01)
        self.send(frames(8000))
        self.assertEqual(sum(map(len, self.captured(self.psn_is(8000, 8001), 32))), 32)

    def test_09_slow_reload_is_awaited(self):
        """The dataplane takes longer than the 30 s roceswd used to wait (it is stopped): the
        reload is awaited, and applied when it answers."""
        failed = metric(scrape()[2], 'rocesw_config_reloads_total{result="error"}')
        ok = self.log_count("reloaded:")
        sent = self.log_count("reload sent to the dataplane")
        dp = self.dataplane_pids()[0]
        os.kill(dp, signal.SIGSTOP)
        try:
            text = self.write_config('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n'
                                     '  "10.5.0.0/16": {nexthop: 10.255.0.5}\n')
            self.wait_log("reload sent to the dataplane", count=sent + 1)
            t0 = time.time()
            while time.time() - t0 < 32:  # longer than the old 30 s limit
                m = scrape()[2]
                self.assertEqual(metric(m, "rocesw_config_reload_in_progress"), 1)
                self.assertEqual(self.log_count("reloaded:"), ok)
                time.sleep(2)
        finally:
            os.kill(dp, signal.SIGCONT)
        self.wait_log("reloaded:", count=ok + 1)
        figure("slow reload: " + self.log_lines("reloaded:")[-1].split(": ", 2)[-1].strip())
        m = scrape()[2]
        self.assertEqual(metric(m, 'rocesw_config_reloads_total{result="error"}'), failed)
        self.assertEqual(metric(m, "rocesw_config_reload_in_progress"), 0)
        self.assertIn("10.5.0.0/16", [r["prefix"] for r in self.show("routes")])
        with open(self.running) as f:
            self.assertEqual(f.read(), text)

    def test_10_killed_mid_reload(self):
        """Killed while a reload is in its hands: restarted on the last applied config, which
        running-config still is; the reload is reported not applied."""
        with open(self.running) as f:
            applied = f.read()
        sent = self.log_count("reload sent to the dataplane")
        answers = self.log_count("dataplane answers on")
        dp = self.dataplane_pids()[0]
        os.kill(dp, signal.SIGSTOP)  # so the reload is surely in flight when it dies
        self.write_config('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n'
                          '  "10.5.0.0/16": {nexthop: 10.255.0.5}\n'
                          '  "10.6.0.0/16": {nexthop: 10.255.0.3}\n')
        self.wait_log("reload sent to the dataplane", count=sent + 1)
        os.kill(dp, signal.SIGKILL)
        self.wait_log("reload not applied")
        self.wait_log("dataplane answers on", count=answers + 1, timeout=120)
        with open(self.running) as f:
            self.assertEqual(f.read(), applied, "running-config: the last applied")
        routes = [r["prefix"] for r in self.show("routes")]
        self.assertIn("10.5.0.0/16", routes)
        self.assertNotIn("10.6.0.0/16", routes, "the restarted dataplane runs running-config")
        ok = self.log_count("reloaded:")
        os.kill(self.daemon.pid, signal.SIGHUP)  # as the log says: retry
        self.wait_log("reloaded:", count=ok + 1)
        self.assertIn("10.6.0.0/16", [r["prefix"] for r in self.show("routes")])

    def test_11_rename_and_edit_in_place_under_flood(self):
        ok, failed = self.log_count("reloaded:"), self.log_count("reload refused")
        failed += self.log_count("reload not applied")
        flood = self.flood(20000)
        try:
            # replaced atomically
            tmp = self.cfg + ".tmp"
            with open(tmp, "w") as f:
                f.write(self.base + '  "10.3.0.0/16": {nexthop: 10.255.0.7}\n'
                        '  "10.8.0.0/16": {nexthop: 10.255.0.1}\n')
            os.rename(tmp, self.cfg)
            self.wait_log("reloaded:", count=ok + 1)
            # edited in place, in two writes with a pause between: read once, whole
            text = self.base + ('  "10.3.0.0/16": {nexthop: 10.255.0.7}\n'
                                '  "10.8.0.0/16": {nexthop: 10.255.0.1}\n'
                                '  "10.9.0.0/16": {nexthop: 10.255.0.1}\n')
            with open(self.cfg, "w") as f:
                f.write(text[:len(text) // 2])
                f.flush()
                time.sleep(1)  # a half-written file is there to be misread, if anyone would
                f.write(text[len(text) // 2:])
            self.wait_log("reloaded:", count=ok + 2)
        finally:
            sent = self.flood_stop(flood)
        self.assertEqual(self.log_count("reload refused") + self.log_count("reload not applied"),
                         failed, "no half file read")
        self.assertEqual(self.log_count("reloaded:"), ok + 2, "one reload each")
        routes = [r["prefix"] for r in self.show("routes")]
        self.assertIn("10.9.0.0/16", routes)
        self.assertNotIn("10.6.0.0/16", routes)
        self.assert_all_delivered(20000, sent)
        figure(f"rename + in-place edit under a flood: {sent} frames, all delivered")

    def test_12_roceswd_restarted_reattaches(self):
        """roceswd SIGKILLed while a flood runs; a new one (under NOTIFY_SOCKET) re-attaches to
        the same dataplane: nothing lost, no second dataplane."""
        dp = self.dataplane_pids()
        self.assertEqual(len(dp), 1)
        notify_path = os.path.join(self.dir, "notify.sock")
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(notify_path)
        started = self.log_count("started dataplane pid")
        flood = self.flood(40000)
        try:
            self.daemon.kill()
            self.daemon.wait()
            self.log.write("--- roceswd SIGKILLed, started again ---\n")
            self.log.flush()
            env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="1000000")
            ok = self.log_count("reloaded:")
            type(self).daemon = self.lab.start([ROCESWD, "--config", self.cfg, "--foreground"],
                                               stdout=self.log, stderr=self.log, env=env)
            self.wait_log(f"re-attaching to the dataplane pid {dp[0]}")
            self.wait_log("reloaded:", count=ok + 1)
            self.assertIn("0 table writes", self.log_lines("reloaded:")[-1],
                          "the dataplane already runs this config")
            # the service manager hears READY=1, then a watchdog ping every WATCHDOG_USEC/2
            ns.settimeout(10)
            msgs = []
            while sum("WATCHDOG=1" in m for _, m in msgs) < 4:
                msgs.append((time.time(), ns.recv(4096).decode()))
            self.assertTrue(any("READY=1" in m for _, m in msgs), msgs)
            pings = [t for t, m in msgs if "WATCHDOG=1" in m]
            gaps = [b - a for a, b in zip(pings, pings[1:])]
            self.assertLess(max(gaps), 1.0, f"pinged within WatchdogSec: gaps {gaps}")
            time.sleep(0.5)  # the flood goes on under the new roceswd
        finally:
            sent = self.flood_stop(flood)
            ns.close()
        self.assertEqual(self.dataplane_pids(), dp, "the same dataplane, and only it")
        self.assertEqual(self.log_count("started dataplane pid"), started, "none started")
        self.assert_all_delivered(40000, sent)
        figure(f"roceswd SIGKILLed and restarted under a flood: {sent} frames, all delivered; "
               f"watchdog gaps {min(gaps):.2f}-{max(gaps):.2f} s")
        # and it supervises what it adopted
        answers = self.log_count("dataplane answers on")
        os.kill(dp[0], signal.SIGKILL)
        self.wait_log("dataplane answers on", count=answers + 1, timeout=120)
        self.assertEqual(len(self.dataplane_pids()), 1)

    def test_99_sigterm_exits_cleanly(self):
        """Status 0 on SIGTERM; the ASan build (ASAN_OPTIONS=detect_leaks=1) exits non-zero on a
        leak, so this is where a leak fails the test."""
        rc = Lab.stop(self.daemon, signal.SIGTERM)
        with open(self.log.name) as f:
            log = f.read()
        self.assertNotIn("LeakSanitizer", log)
        self.assertEqual(rc, 0, log[-3000:])
        self.assertEqual(self.dataplane_pids(), [], "the dataplane stopped with it")


if __name__ == "__main__":
    unittest.main(verbosity=1)
