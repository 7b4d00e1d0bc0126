#!/usr/bin/python3
"""Soak and chaos: a zone under roceswd for hours, with traffic and faults, checked as it goes.

tests/configs/zone-soak (rtsw1, rtsw2, ctsw1 in one rocesw-dataplane --zone, run by `roceswd
--zone`) with three hosts in network namespaces: h0 (rack 1) and h1 (rack 2) send to r0 (rack 2),
whose port drains at 1 Mb/s, so priority 3 is paused back to the hosts across the zone.

The run is a sequence of rounds. In each, h0 and h1 each send FRAMES lossless frames (DSCP 3,
priority 3) with `rocesw send`, which honours PFC as a RoCE NIC does, and lossy frames (DSCP 0)
from raw sockets. At most one fault is injected while the round's traffic flows, chosen on a
seeded schedule: a valid reload (a route added to or removed from one switch's file), an invalid
reload (a YAML error, a bad prefix, an unknown field, a linked port's speed: refused, then the
file restored), a port flap (`set port` down, up), a PFC storm (`set pfc-storm`: on r0's port,
where the watchdog breaks it with pfcwd_drop, or inside the zone, where it only pauses), kill -9
of the dataplane, roceswd killed and started again (it re-attaches). Meanwhile a control-socket
client and a /metrics client churn (requests, garbage, connections closed unanswered).

A round ends when the senders are done, every switch holds nothing and r0 has read a marker frame
each sender sent last (a switch's queues are FIFO per class and path: a frame sent before the
marker was delivered or dropped before it). Then the invariants, each counted as checked and
failed:
- lossless_explained: every lossless frame sent reached r0 once, or its loss is explained by the
  switches' counters over the round: lossless drops of the traffic manager (`lossless_drops`) of
  a reason the fault in force allows, plus, for a port flap, drops of the ingress stage for a
  down port (ingress_port_down, egress_port_down, neighbor_miss: counted for all classes, so an
  upper bound). Under kill -9 the frames the dead dataplane held or never read are lost with
  its counters: reported, not explained.
- no_lossless_drop_outside_fault: a round with no fault, a reload, an invalid reload, roceswd's
  restart or a storm the watchdog does not watch loses no lossless frame and counts no lossless
  drop.
- no_duplicate: no lossless frame received twice; no frame of a finished round received late.
- restart_in_time: after kill -9, the dataplane answers again and every switch runs the routes
  of the last applied config within roceswd's backoff (0.5 s x 2^(n-1) for the n-th death in a
  row, docs/roceswd.md) + --startup-bound seconds.
- reload_applied / reload_refused: a valid reload changes exactly its switch's routes and
  generation; an invalid one changes nothing.
- reattach: roceswd restarted re-attaches to the same dataplane.
- metrics_match: at the end of each round, with the counters not moving, /metrics says what
  `show counters` says (per switch: received, transmitted, dropped, port rx/tx packets, drops
  by reason) and rocesw_dataplane_restarts_total counts this roceswd's restarts.
- churn_outside_faults: no churn client failed outside the window of a dataplane death or
  roceswd restart.
- rss_flat: each process's RSS (VmRSS, sampled at the end of every round) grows by at most
  --rss-bound-dataplane / --rss-bound-daemon MiB (default 4 and 2) from its first sample once
  warm to any later sample: warm is --warmup seconds into its life and, for a dataplane,
  --warmup-reloads reloads with table writes applied (a reload builds the switch's tables beside
  the running ones: the first ones touch heap no table used before, 64 MiB of DIR-24-8 each).
  Checked for every process with 3 samples or more once warm. Over a run of R reloads, a leak
  per reload larger than the bound / R fails it.

The report (stdout, and --report FILE as JSON): frames, faults by kind, each invariant's checks
and failures, RSS at start and end, restarts and their times. Exit status 0 if every invariant
held. Root only (namespaces); hold the live lock (bench/soak.sh)."""
import argparse
import faulthandler
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "py"))
sys.path.insert(0, os.path.join(ROOT, "tests", "live"))

import rocepkt  # noqa: E402
from common import BUILD, ROCESW  # noqa: E402
from kernel_drops import backlog_drops, ring_stats  # noqa: E402
from labnet import Control, Flood, Lab, wait_until  # noqa: E402

ROCESWD = os.path.join(BUILD, "roceswd")
ZONE_SRC = os.path.join(ROOT, "tests", "configs", "zone-soak")
TAG = "rsoak"
SWITCHES = ("rtsw1", "rtsw2", "ctsw1")
ROUTER = "02:00:00:00:01:00"  # the host ports' MAC in the zone's configs
HOSTS = {"h0": ("02:00:00:01:00:00", "10.1.0.1"), "h1": ("02:00:00:01:00:01", "10.1.0.3"),
         "r0": ("02:00:00:01:00:02", "10.1.0.5")}
HOST_SPEED = 4  # Mb/s: the host links in the configs (rocesw send paces at it)
# the destination QP of a frame says what it is: kind << 20 | round
LOSSLESS, LOSSY, MARKER = {"h0": 1, "h1": 2}, {"h0": 3, "h1": 4}, {"h0": 5, "h1": 6}
FAULTS = ("reload_valid", "reload_invalid", "port_flap", "pfc_storm", "kill_dataplane",
          "roceswd_restart")
# lossless drops each fault may explain: (traffic manager reasons, ingress-stage reasons)
ALLOWED = {"clean": ((), ()), "reload_valid": ((), ()), "reload_invalid": ((), ()),
           "roceswd_restart": ((), ()), "pfc_storm": ((), ()),
           "pfc_storm_watchdog": (("pfcwd_drop",), ()),
           "port_flap": ((), ("ingress_port_down", "egress_port_down", "neighbor_miss")),
           "kill_dataplane": ((), ())}
FLAP_PORTS = (("rtsw1", "Ethernet0"), ("rtsw2", "Ethernet0"), ("rtsw2", "Ethernet8"),
              ("ctsw1", "Ethernet8"))
STORM_PORTS = (("rtsw2", "Ethernet8", True), ("ctsw1", "Ethernet8", False),
               ("rtsw1", "Ethernet256", False))
GRACE = 1.0  # s around a fault window in which a churn client's failure is expected


def now():
    return time.monotonic()


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pcap_bytes(frames):
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for k, f in enumerate(frames):
        out.append(struct.pack("<IIII", k // 1000, (k % 1000) * 1000, len(f), len(f)) + f)
    return b"".join(out)


class Frames:
    """RoCE frames from one template per (host, class), patched with QP and PSN, ICRC redone."""

    def __init__(self):
        self.tmpl = {}
        for h in ("h0", "h1"):
            mac, ip = HOSTS[h]
            for cls, dscp, size in (("ll", 3, 512), ("lossy", 0, 64)):
                self.tmpl[(h, cls)] = bytes(rocepkt.roce(
                    opcode=0x04, src=ip, dst=HOSTS["r0"][1], dqp=0, psn=0, dscp=dscp, ecn=0,
                    smac=mac, dmac=ROUTER, payload=bytes(size)))

    def make(self, h, cls, dqp, psn):
        f = bytearray(self.tmpl[(h, cls)])
        f[47:50] = dqp.to_bytes(3, "big")
        f[51:54] = psn.to_bytes(3, "big")
        f[-4:] = rocepkt.icrc(bytes(f[14:]))
        return bytes(f)


class Receiver(threading.Thread):
    """r0's frames, by round and kind: the PSNs seen."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: never the bottleneck
        sock.settimeout(0.2)
        self.lock = threading.Lock()
        self.seen = {}  # round -> kind -> [psn]
        self.closed = set()  # rounds already accounted
        self.late = 0
        self.halt = threading.Event()
        self.start()

    def run(self):
        while not self.halt.is_set():
            try:
                f = self.sock.recv(4096)
            except socket.timeout:
                continue
            if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 17 or f[36:38] != b"\x12\xb7":
                continue
            dqp = int.from_bytes(f[47:50], "big")
            rnd, kind = dqp & 0xFFFFF, dqp >> 20
            with self.lock:
                if rnd in self.closed:
                    self.late += 1
                else:
                    self.seen.setdefault(rnd, {}).setdefault(kind, []).append(
                        int.from_bytes(f[51:54], "big"))

    def has(self, rnd, kind):
        with self.lock:
            return bool(self.seen.get(rnd, {}).get(kind))

    def take(self, rnd):
        with self.lock:
            self.closed.add(rnd)
            return self.seen.pop(rnd, {})

    def dropped(self):
        """Frames the receiving socket itself dropped (PACKET_STATISTICS, since the last call)."""
        _, d = struct.unpack("II", self.sock.getsockopt(263, 6, 8))
        return d


class Churn(threading.Thread):
    """A client that keeps asking, half of it nonsense; every outcome logged with its times."""

    def __init__(self, soak, kind, seed):
        super().__init__(daemon=True)
        self.soak, self.kind, self.rng = soak, kind, random.Random(seed)
        self.ok = 0
        self.failures = []  # (start, end, what)
        self.halt = threading.Event()
        self.start()

    def run(self):
        while not self.halt.is_set():
            t0 = now()
            try:
                what = self.ctl_once() if self.kind == "control" else self.metrics_once()
            except Exception as e:  # noqa: BLE001: any failure is an outcome to judge
                what = f"{type(e).__name__}: {e}"
            if what:
                self.failures.append((t0, now(), what))
            else:
                self.ok += 1
            self.halt.wait(0.05 if self.kind == "control" else 0.2)

    def ctl_once(self):
        op = self.rng.choice(("counters", "routes", "hello", "ecmp", "close", "garbage",
                              "version"))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(30)
        try:
            s.connect(self.soak.sock)
            if op == "close":
                return None
            if op == "garbage":
                s.send(b"{not json")
            elif op == "version":
                s.send(json.dumps({"v": 9, "op": "hello"}).encode())
            elif op == "hello":
                s.send(json.dumps({"v": 1, "op": "hello"}).encode())
            else:
                req = {"v": 1, "op": "show", "what": op}
                if op != "counters":
                    req["switch"] = self.rng.choice(SWITCHES)
                s.send(json.dumps(req).encode())
            r = json.loads(s.recv(1 << 22))
        finally:
            s.close()
        want = op not in ("garbage", "version")
        if r.get("ok") != want:
            return f"{op}: {r}"
        return None

    def metrics_once(self):
        op = self.rng.choice(("get", "get", "head", "close"))
        if op == "close":
            s = socket.create_connection(("127.0.0.1", self.soak.metrics_port), timeout=10)
            s.close()
            return None
        req = urllib.request.Request(f"http://127.0.0.1:{self.soak.metrics_port}/metrics",
                                     method=op.upper())
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read().decode()
            if r.status != 200:
                return f"{op}: status {r.status}"
        if op == "get" and "rocesw_dataplane_up 1" not in body:
            return "rocesw_dataplane_up is not 1"
        return None


class Invariants:
    def __init__(self):
        self.checks = {}

    def check(self, name, ok, msg=""):
        c = self.checks.setdefault(name, {"checked": 0, "failed": 0, "failures": []})
        c["checked"] += 1
        if not ok:
            c["failed"] += 1
            if len(c["failures"]) < 20:
                c["failures"].append(msg)
            print(f"  INVARIANT {name} FAILED: {msg}", flush=True)
        return ok


def metric_samples(text):
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        if not m:
            continue
        labels = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                         m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


class Soak:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.inv = Invariants()
        self.dir = a.workdir
        self.zdir = os.path.join(self.dir, "zone")
        self.sock = os.path.join(self.dir, "run", "dp.sock")
        self.metrics_port = a.metrics_port
        self.ctl = Control(self.sock)
        self.frames = Frames()
        self.windows = []  # [kind, start, end or None]
        self.faults = {}
        self.variants = {}  # faults by kind and variant ("reload_invalid yaml", ...)
        self.restarts = []
        self.rss = {"roceswd": [], "dataplane": []}  # (t, pid, kib, reloads applied by then)
        self.born = {}  # pid -> time first seen
        self.totals = {"lossless_sent": 0, "lossless_received": 0, "lossless_lost_counted": 0,
                       "lossless_lost_with_killed_dataplane": 0, "lossless_lost_unexplained": 0,
                       "lossy_sent": 0, "lossy_received": 0, "markers_sent": 0,
                       "xoff_seen_by_senders": 0, "kernel_ring_drops": 0}
        self.extra = {sw: set() for sw in SWITCHES}  # routes the valid reloads added
        self.kills_since_daemon = 0
        self.dp_reloads = 0  # reloads with table writes the running dataplane applied
        self.deaths_in_row = 0
        self.dp_answered_at = None

    # --- set-up ---------------------------------------------------------------------------

    def setup(self):
        shutil.copytree(ZONE_SRC, self.zdir)
        self.zone = os.path.join(self.zdir, "zone.yaml")
        with open(self.zone, "a") as f:
            f.write("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 2048 --no-pci -l 0-1 "
                    f"--no-shconf --file-prefix {TAG} --log-level error\", control_socket: "
                    f"{self.sock}, metrics_port: {self.metrics_port}}}\n")
        self.base = {}
        for sw in SWITCHES:
            with open(self.cfg(sw)) as f:
                self.base[sw] = f.read()
            tops = re.findall(r"^([A-Z_]+):", self.base[sw], re.M)
            assert tops[-1] == "STATIC_ROUTE", f"{sw}: routes are appended to STATIC_ROUTE"
        self.lab = Lab(TAG)
        self.ns = {h: self.lab.host(h, f"{TAG}-{h}", HOSTS[h][0]) for h in HOSTS}
        self.tx = {h: self.lab.socket(self.ns[h]) for h in ("h0", "h1")}
        self.rx = Receiver(self.lab.socket(self.ns["r0"], ethertype=0x0003))
        self.log_path = os.path.join(self.dir, "roceswd.log")
        self.log = open(self.log_path, "ab")
        self.t0 = now()
        self.start_daemon()
        self.wait_log(0, "dataplane answers on")
        self.dp_answered_at = now()
        self.base_routes = {sw: self.routes(sw) for sw in SWITCHES}
        self.gen = {sw: self.generation(sw) for sw in SWITCHES}
        self.churn = [Churn(self, "control", self.a.seed + 1), Churn(self, "metrics",
                                                                     self.a.seed + 2)]

    def start_daemon(self):
        self.daemon = subprocess.Popen([ROCESWD, "--zone", self.zone, "--foreground"],
                                       stdout=self.log, stderr=self.log,
                                       stdin=subprocess.DEVNULL)

    def cfg(self, sw):
        return os.path.join(self.zdir, f"{sw}.yaml")

    def close(self):
        for c in getattr(self, "churn", []):
            c.halt.set()
            c.join(60)
        if getattr(self, "daemon", None) and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(60)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
        if hasattr(self, "rx"):
            self.rx.halt.set()
            self.rx.join(5)
        if hasattr(self, "lab"):
            self.lab.close()
        self.log.close()

    # --- reading the switch -------------------------------------------------------------

    def log_size(self):
        return os.path.getsize(self.log_path)

    def log_since(self, mark):
        with open(self.log_path, "rb") as f:
            f.seek(mark)
            return f.read().decode(errors="replace")

    def wait_log(self, mark, *texts):
        """Waits until the log after byte `mark` holds one of texts; returns that text."""
        return wait_until(lambda: next((t for t in texts if t in self.log_since(mark)), None),
                          f"{' or '.join(texts)} in roceswd's log", every=0.1)

    def show(self, what, sw=None):
        req = {"v": 1, "op": "show", "what": what}
        if sw:
            req["switch"] = sw
        r = self.ctl.request(req)
        if not r.get("ok"):
            raise AssertionError(f"show {what}: {r}")
        return r["result"]

    def routes(self, sw):
        return sorted(r["prefix"] for r in self.show("routes", sw))

    def generation(self, sw):
        return self.show("config", sw)["generation"]

    def request(self, **kw):
        r = self.ctl.request({"v": 1, **kw})
        if not r.get("ok"):
            raise AssertionError(f"{kw}: {r}")
        return r["result"]

    def dp_pid(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(self.sock)
            pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                         12))
            return pid
        finally:
            s.close()

    def counters(self):
        c = self.ctl.counters()
        return {s["name"]: s for s in c["switches"]}, c

    def quiet(self, zone):
        """Nothing held by any switch or link."""
        sws, c = zone
        return (all(s["conservation"]["queued"] == 0 for s in sws.values()) and
                all(x.get("in_flight", 0) == 0 for x in c.get("links", [])))

    def expected_routes(self, sw):
        return sorted(set(self.base_routes[sw]) | self.extra[sw])

    def ring_drops(self, pid):
        n = 0
        for h in ("h0", "h1"):
            try:
                n += ring_stats(pid, f"{TAG}-{h}")[1]
            except (OSError, ProcessLookupError):
                pass
        return n

    # --- a round --------------------------------------------------------------------------

    def run_round(self, k, fault, variant):
        frames_n = self.a.frames
        pcaps = {}
        for h in ("h0", "h1"):
            dqp = LOSSLESS[h] << 20 | k
            pcaps[h] = os.path.join(self.dir, f"{h}.pcap")
            with open(pcaps[h], "wb") as f:
                f.write(pcap_bytes([self.frames.make(h, "ll", dqp, p) for p in range(frames_n)]))
        pid0 = self.dp_pid()
        self.ring_drops(pid0)  # PACKET_STATISTICS restart at each read
        backlog0 = backlog_drops()
        start, _ = self.counters()
        segments = []  # (from, to) counter snapshots; from None: a dataplane started meanwhile
        senders = {h: subprocess.Popen(
            ["ip", "netns", "exec", self.ns[h], ROCESW, "send", "eth0", pcaps[h], "--rate",
             str(self.a.rate), "--link-speed", str(HOST_SPEED), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL) for h in ("h0", "h1")}
        lossy = {h: self.lossy_flood(h, k) for h in ("h0", "h1")}
        allowed = ALLOWED[fault]
        killed = False
        ring = 0
        if fault != "clean":
            # the fault meets traffic in the switches: a quarter of h0's frames are in
            base = start["rtsw1"]["ports"]
            rx0 = next(p for p in base if p["name"] == "Ethernet0")["rx_packets"]
            wait_until(lambda: self.port_rx("rtsw1", "Ethernet0") >= rx0 + frames_n // 4,
                       "h0's traffic into rtsw1")
            self.faults[fault] = self.faults.get(fault, 0) + 1
            res = getattr(self, "fault_" + fault)(variant)
            kind = f"{fault} {res if fault == 'pfc_storm' else variant or ''}".strip()
            self.variants[kind] = self.variants.get(kind, 0) + 1
            if fault == "pfc_storm" and res == "watchdog":
                allowed = ALLOWED["pfc_storm_watchdog"]
            if fault == "kill_dataplane":
                killed = True
                segments.append((start, res[0]))
                ring += res[1]
                start = None
        reports = {}
        for h, p in senders.items():
            out, err = p.communicate(timeout=600)
            if p.returncode:
                raise AssertionError(f"rocesw send on {h}: {err}")
            reports[h] = json.loads(out)
        lossy_sent = {h: f.stop() for h, f in lossy.items()}
        self.lab.floods.clear()
        wait_until(lambda: self.quiet(self.counters()), "the switches to drain")
        self.send_markers(k)
        end, zone_end = self.counters()
        segments.append((start, end))
        pid1 = self.dp_pid()
        ring += self.ring_drops(pid1)
        backlog = backlog_drops() - backlog0
        seen = self.rx.take(k)
        self.account(k, fault, variant, allowed, killed, segments, reports, lossy_sent, seen,
                     ring, backlog)
        self.metrics_match(k)
        self.sample_rss(pid1)
        return reports

    def port_rx(self, sw, port):
        sws, _ = self.counters()
        return next(p for p in sws[sw]["ports"] if p["name"] == port)["rx_packets"]

    def lossy_flood(self, h, k):
        dqp = LOSSY[h] << 20 | k
        return Flood(self.lab, self.tx[h], [self.frames.make(h, "lossy", dqp, p)
                                            for p in range(64)], gap=1.0 / self.a.lossy_rate)

    def send_markers(self, k):
        for h in ("h0", "h1"):
            psn = 0
            while True:
                self.tx[h].send(self.frames.make(h, "ll", MARKER[h] << 20 | k, psn))
                self.totals["markers_sent"] += 1
                try:
                    wait_until(lambda: self.rx.has(k, MARKER[h]), f"{h}'s marker at r0",
                               timeout=10)
                    break
                except AssertionError:
                    psn += 1  # a marker lost (it should not be): another; the hang guard says
                    if psn > 12:
                        raise

    @staticmethod
    def delta(segments, field):
        """{reason: count} summed over the switches and segments of field (a dict of counters
        in each switch's 'conservation' or its 'drops')."""
        out = {}
        for a, b in segments:
            for sw, s in b.items():
                now_ = s["conservation"][field] if field == "lossless_drops" else s[field]
                was = {}
                if a is not None:
                    was = (a[sw]["conservation"][field] if field == "lossless_drops"
                           else a[sw][field])
                for r, v in now_.items():
                    d = v - was.get(r, 0)
                    if d:
                        out[r] = out.get(r, 0) + d
        return out

    def account(self, k, fault, variant, allowed, killed, segments, reports, lossy_sent, seen,
                ring, backlog):
        inv = self.inv
        sent = recv = dups = 0
        for h in ("h0", "h1"):
            n = reports[h]["sent"]
            psns = seen.get(LOSSLESS[h], [])
            sent += n
            recv += len(set(psns))
            dups += len(psns) - len(set(psns))
            p3 = reports[h]["priorities"][3]
            self.totals["xoff_seen_by_senders"] += p3["xoff_rx"]
        lossy_recv = sum(len(seen.get(LOSSY[h], [])) for h in ("h0", "h1"))
        lost = sent - recv
        tm = self.delta(segments, "lossless_drops")
        drops = self.delta(segments, "drops")
        tm_n = sum(tm.values())
        ingress = sum(drops.get(r, 0) for r in allowed[1])
        rcv_drop = self.rx.dropped()
        tag = f"round {k} ({fault}{' ' + variant if variant else ''})"
        inv.check("no_duplicate", dups == 0 and self.rx.late == 0,
                  f"{tag}: {dups} lossless frames twice, {self.rx.late} late frames")
        inv.check("receiver_kept_up", rcv_drop == 0, f"{tag}: r0's socket dropped {rcv_drop}")
        bad = {r: v for r, v in tm.items() if r not in allowed[0]}
        inv.check("lossless_drop_reason_allowed", not bad,
                  f"{tag}: lossless drops {bad} not allowed under {fault}")
        kernel = f" (the kernel dropped {ring} frames in the switch's af_packet rings, " \
                 f"{backlog} in receive backlogs)" if ring or backlog else ""
        if killed:
            inv.check("lossless_explained", lost >= 0, f"{tag}: more received than sent")
            self.totals["lossless_lost_with_killed_dataplane"] += max(lost - tm_n, 0)
            self.totals["lossless_lost_counted"] += min(tm_n, max(lost, 0))
        else:
            ok = tm_n <= lost <= tm_n + ingress
            inv.check("lossless_explained", ok,
                      f"{tag}: {lost} lossless frames lost; counted: traffic manager {tm}, "
                      f"ingress {ingress} of {list(allowed[1])}{kernel}")
            self.totals["lossless_lost_counted"] += min(lost, tm_n + ingress)
            self.totals["lossless_lost_unexplained"] += max(lost - tm_n - ingress, 0)
        if not allowed[0] and not allowed[1] and not killed:
            inv.check("no_lossless_drop_outside_fault", lost == 0 and tm_n == 0,
                      f"{tag}: {lost} lossless frames lost, lossless drops {tm}{kernel}")
        self.totals["lossless_sent"] += sent
        self.totals["lossless_received"] += recv
        self.totals["lossy_sent"] += sum(lossy_sent.values())
        self.totals["lossy_received"] += lossy_recv
        self.totals["kernel_ring_drops"] += ring
        print(f"{now() - self.t0:8.1f} s  round {k:4d} {fault:16s} {variant or '':10s} "
              f"lossless {recv}/{sent} (drops {tm or '-'}) lossy {lossy_recv}/"
              f"{sum(lossy_sent.values())} drops {drops or '-'}", flush=True)

    def metrics_match(self, k):
        for _ in range(50):
            a, _ = self.counters()
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                        timeout=30) as r:
                m = metric_samples(r.read().decode())
            b, _ = self.counters()
            if self.packet_view(a) == self.packet_view(b):
                break
            time.sleep(0.2)
        else:
            self.inv.check("metrics_match", False, f"round {k}: the counters never stood still")
            return
        want = {}
        for sw, s in a.items():
            c = s["conservation"]
            for name, key in (("received", "received"), ("transmitted", "transmitted"),
                              ("dropped", "dropped")):
                want[(f"rocesw_packets_{name}_total", (("switch", sw),))] = c[key]
            for p in s["ports"]:
                for way in ("rx", "tx"):
                    want[(f"rocesw_port_{way}_packets_total",
                          (("port", p["name"]), ("switch", sw)))] = p[f"{way}_packets"]
            for r, v in s["drops"].items():
                want[("rocesw_drops_total", (("reason", r), ("switch", sw)))] = v
        want[("rocesw_dataplane_restarts_total", ())] = self.kills_since_daemon
        want[("rocesw_dataplane_up", ())] = 1
        diff = {f"{n}{dict(lb)}": (v, m.get((n, lb))) for (n, lb), v in want.items()
                if m.get((n, lb), 0 if n == "rocesw_drops_total" else None) != v}
        first = dict(list(diff.items())[:8])
        self.inv.check("metrics_match", not diff,
                       f"round {k}: show counters vs /metrics differ: {first}")

    @staticmethod
    def packet_view(sws):
        return {sw: (s["conservation"]["received"], s["conservation"]["dropped"],
                     s["conservation"]["transmitted"], tuple(sorted(s["drops"].items())),
                     tuple((p["rx_packets"], p["tx_packets"]) for p in s["ports"]))
                for sw, s in sws.items()}

    def sample_rss(self, dp):
        t = now()
        for kind, pid in (("roceswd", self.daemon.pid), ("dataplane", dp)):
            v = rss_kib(pid)
            if v is not None:
                self.born.setdefault(pid, t)
                self.rss[kind].append((t - self.t0, pid, v, self.dp_reloads))

    # --- faults ---------------------------------------------------------------------------

    def write(self, sw, text):
        """Replaces a switch's file by rename, as editors do."""
        path = self.cfg(sw)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.rename(path + ".tmp", path)

    def valid_text(self, sw):
        return self.base[sw] + "".join(f'  "{p}": {{blackhole: true}}\n'
                                       for p in sorted(self.extra[sw]))

    def state(self):
        return {sw: (self.routes(sw), self.generation(sw)) for sw in SWITCHES}

    def fault_reload_valid(self, _):
        sw = self.rng.choice(SWITCHES)
        if self.extra[sw] and self.rng.random() < 0.5:
            self.extra[sw].discard(self.rng.choice(sorted(self.extra[sw])))
        else:
            self.extra[sw].add(f"192.0.2.{self.rng.randrange(1, 255)}/32")
        before = self.state()
        mark = self.log_size()
        self.write(sw, self.valid_text(sw))
        self.wait_log(mark, "reloaded: zone", "reload refused", "reload not applied")
        after = self.state()
        changed = after[sw][0] != before[sw][0]
        self.dp_reloads += changed
        ok = (after[sw][0] == self.expected_routes(sw) and
              after[sw][1] == before[sw][1] + (1 if changed else 0) and
              all(after[o] == before[o] for o in SWITCHES if o != sw))
        self.inv.check("reload_applied", ok, f"reload of {sw}: {before} -> {after}, "
                       f"want routes {self.expected_routes(sw)}; "
                       f"log: {self.log_since(mark)[-2000:]}")

    def fault_reload_invalid(self, variant):
        sw = self.rng.choice(SWITCHES)
        good = self.valid_text(sw)
        bad = {"yaml": good + '  "192.0.2.250/32": {blackhole: true\n',
               "prefix": good + '  "10.1.0.300/32": {blackhole: true}\n',
               "field": good.replace("mtu: 1500}", "mtu: 1500, colour: red}", 1),
               "speed": good.replace("speed: 8,", "speed: 16,", 1)}[variant]
        before = self.state()
        mark = self.log_size()
        self.write(sw, bad)
        self.wait_log(mark, "reload refused", "reload not applied")
        after = self.state()
        self.inv.check("reload_refused", after == before,
                       f"invalid reload ({variant}) of {sw} changed {before} -> {after}")
        mark = self.log_size()
        self.write(sw, good)
        self.wait_log(mark, "reloaded: zone")

    def fault_port_flap(self, _):
        sw, port = self.rng.choice(FLAP_PORTS)
        self.request(op="set_port", switch=sw, port=port, admin="down")
        time.sleep(self.rng.uniform(0.2, 1.5))  # how long it is down: not what is checked
        self.request(op="set_port", switch=sw, port=port, admin="up")

    def wd_count(self, sw, port, stat):
        sws, _ = self.counters()
        p = next(p for p in sws[sw]["ports"] if p["name"] == port)
        q = next(q for q in p["queues"] if q["queue"] == 3)
        return q[f"PFC_WD_QUEUE_STATS_DEADLOCK_{stat}"]

    def fault_pfc_storm(self, variant):
        sw, port, wd = next(x for x in STORM_PORTS if x[2] == (variant == "watchdog"))
        if not wd:
            sw, port, wd = self.rng.choice([x for x in STORM_PORTS if not x[2]])
        if wd:
            det, res = self.wd_count(sw, port, "DETECTED"), self.wd_count(sw, port, "RESTORED")
        self.request(op="pfc_storm", switch=sw, port=port, priority=3, on=True)
        if wd:
            wait_until(lambda: self.wd_count(sw, port, "DETECTED") > det,
                       f"the watchdog to see the storm on {sw}|{port}")
        time.sleep(self.rng.uniform(0.2, 1.5))
        self.request(op="pfc_storm", switch=sw, port=port, priority=3, on=False)
        if wd:
            wait_until(lambda: self.wd_count(sw, port, "RESTORED") > res,
                       f"the watchdog to restore {sw}|{port}")
        return "watchdog" if wd else "zone"

    def fault_kill_dataplane(self, _):
        pid = self.dp_pid()
        pre, _ = self.counters()
        ring = self.ring_drops(pid)
        mark = self.log_size()
        t0 = now()
        # roceswd's backoff (docs/roceswd.md): the n-th death in a row of dataplanes that did
        # not answer for 30 s waits 0.5 s x 2^(n-1), at most 30 s; 2 s of slack at the edge
        alive = t0 - self.dp_answered_at
        self.deaths_in_row = 1 if alive > 32 else self.deaths_in_row + 1
        backoff = min(0.5 * 2 ** (self.deaths_in_row - 1), 30.0)
        win = ["kill_dataplane", t0, None]
        self.windows.append(win)
        os.kill(pid, signal.SIGKILL)
        self.kills_since_daemon += 1
        self.wait_log(mark, "dataplane answers on")
        t1 = now()
        self.dp_answered_at = t1
        self.dp_reloads = 0
        win[2] = t1
        wait_until(lambda: all(self.routes(sw) == self.expected_routes(sw) for sw in SWITCHES),
                   "the last applied routes on every switch")
        t2 = now()
        bound = backoff + self.a.startup_bound
        new = self.dp_pid()
        self.restarts.append({"at_s": round(t0 - self.t0, 1), "old_pid": pid, "new_pid": new,
                              "answered_s": round(t1 - t0, 2), "config_s": round(t2 - t0, 2),
                              "backoff_s": backoff, "bound_s": bound})
        self.inv.check("restart_in_time", t2 - t0 <= bound and new != pid,
                       f"dataplane {pid} killed: pid {new} ran the last config after "
                       f"{t2 - t0:.2f} s, bound {bound} s")
        self.gen = {sw: self.generation(sw) for sw in SWITCHES}
        return pre, ring

    def fault_roceswd_restart(self, _):
        dp = self.dp_pid()
        t0 = now()
        win = ["roceswd_restart", t0, None]
        self.windows.append(win)
        self.daemon.kill()
        self.daemon.wait()
        mark = self.log_size()
        self.log.write(b"--- soak: roceswd SIGKILLed, started again ---\n")
        self.log.flush()
        self.start_daemon()
        self.wait_log(mark, "reloaded: zone", "reload refused", "reload not applied")
        win[2] = now()
        self.kills_since_daemon = 0
        self.dp_reloads = 0  # reloads with table writes the running dataplane applied
        text = self.log_since(mark)
        self.inv.check("reattach", f"re-attaching to the dataplane pid {dp}" in text and
                       "reloaded: zone" in text and self.dp_pid() == dp,
                       f"roceswd restarted: {text[-1500:]}")

    # --- the run --------------------------------------------------------------------------

    def schedule(self):
        """(fault, variant) per round: for --rounds 0 with --ci every fault once, each after a
        clean round; else a seeded draw."""
        variants = {"reload_invalid": ("yaml", "prefix", "field", "speed"),
                    "pfc_storm": ("watchdog", "zone")}
        if self.a.ci:
            kinds = [(f, v) for f in FAULTS for v in variants.get(f, (None,))]
            self.rng.shuffle(kinds)
            yield ("clean", None)
            for kv in kinds:
                yield kv
                yield ("clean", None)
            return
        weights = {"clean": 3, "reload_valid": 3, "reload_invalid": 2, "port_flap": 2,
                   "pfc_storm": 2, "kill_dataplane": 0.3, "roceswd_restart": 0.15}
        yield ("clean", None)
        while True:
            f = self.rng.choices(list(weights), list(weights.values()))[0]
            yield (f, self.rng.choice(variants[f]) if f in variants else None)

    def run(self):
        k = 0
        for fault, variant in self.schedule():
            if not self.a.ci and now() - self.t0 >= self.a.duration:
                break
            k += 1
            self.run_round(k, fault, variant)
        self.rounds = k

    def finish(self):
        for c in self.churn:
            c.halt.set()
            c.join(60)
        t_end = now()
        for c in self.churn:
            bad = [(s, e, w) for s, e, w in c.failures if not any(
                s <= (wend or t_end) + GRACE and e >= wstart - GRACE
                for _, wstart, wend in self.windows)]
            self.inv.check("churn_outside_faults", not bad,
                           f"{c.kind} client: {len(bad)} failures outside fault windows, "
                           f"first {[(round(s - self.t0, 1), w) for s, _, w in bad[:5]]}")
        rss = {}
        bounds = {"roceswd": self.a.rss_bound_daemon, "dataplane": self.a.rss_bound_dataplane}
        for kind, samples in self.rss.items():
            per = {}
            for t, pid, v, n in samples:
                per.setdefault(pid, []).append((t, v, n))
            lives = []
            for pid, s in per.items():
                born = self.born[pid] - self.t0
                # warm: lived --warmup s and, a dataplane, applied --warmup-reloads reloads
                # (each builds a switch's tables beside the running ones: the first ones
                # touch memory of the heap no table used before)
                after = [(t, v) for t, v, n in s if t - born >= self.a.warmup and
                         (kind == "roceswd" or n >= self.a.warmup_reloads)]
                life = {"pid": pid, "first_s": round(s[0][0], 1), "last_s": round(s[-1][0], 1),
                        "first_kib": s[0][1], "last_kib": s[-1][1],
                        "max_kib": max(v for _, v, _ in s), "samples": len(s),
                        "series": [[round(t, 1), v, n] for t, v, n in s]}
                if len(after) >= 3:
                    growth = max(v for _, v in after) - after[0][1]
                    life.update(warm_kib=after[0][1], growth_after_warmup_kib=growth)
                    self.inv.check("rss_flat", growth <= bounds[kind] * 1024,
                                   f"{kind} pid {pid}: RSS grew {growth} KiB after warm-up "
                                   f"({after[0][1]} -> max {max(v for _, v in after)} KiB), "
                                   f"bound {bounds[kind]} MiB")
                lives.append(life)
            rss[kind] = {"start_kib": samples[0][2] if samples else None,
                         "end_kib": samples[-1][2] if samples else None,
                         "bound_mib": bounds[kind], "processes": lives}
        churn = {c.kind: {"ok": c.ok, "failed": len(c.failures)} for c in self.churn}
        return {"seed": self.a.seed, "duration_s": round(t_end - self.t0, 1),
                "rounds": self.rounds, "frames_per_round_per_host": self.a.frames,
                "frames": self.totals, "faults": self.faults, "fault_variants": self.variants,
                "invariants": self.inv.checks,
                "held": all(c["failed"] == 0 for c in self.inv.checks.values()),
                "rss": rss, "restarts": self.restarts, "churn": churn,
                "warmup_s": self.a.warmup, "startup_bound_s": self.a.startup_bound}


def print_report(r):
    print(f"\nsoak: {r['duration_s']} s, {r['rounds']} rounds, seed {r['seed']}")
    f = r["frames"]
    print(f"frames: lossless sent {f['lossless_sent']}, received {f['lossless_received']}, "
          f"lost and counted {f['lossless_lost_counted']}, lost with a killed dataplane "
          f"{f['lossless_lost_with_killed_dataplane']}, unexplained "
          f"{f['lossless_lost_unexplained']}; lossy sent {f['lossy_sent']}, received "
          f"{f['lossy_received']}; XOFF seen by the senders {f['xoff_seen_by_senders']}")
    print("faults: " + ", ".join(f"{k} {v}" for k, v in sorted(r["faults"].items())) +
          " (" + ", ".join(f"{k}: {v}" for k, v in sorted(r["fault_variants"].items())) + ")")
    for name, c in sorted(r["invariants"].items()):
        print(f"invariant {name}: {c['checked']} checks, {c['failed']} failed")
        for m in c["failures"][:5]:
            print(f"    {m}")
    for kind, x in r["rss"].items():
        print(f"RSS {kind}: start {x['start_kib']} KiB, end {x['end_kib']} KiB, bound "
              f"{x['bound_mib']} MiB after {r['warmup_s']} s of warm-up; processes: " +
              "; ".join(f"pid {p['pid']} {p['first_kib']}->{p['last_kib']} KiB"
                        + (f" (+{p['growth_after_warmup_kib']} after warm-up)"
                           if "growth_after_warmup_kib" in p else "")
                        for p in x["processes"]))
    for s in r["restarts"]:
        print(f"restart at {s['at_s']} s: answered after {s['answered_s']} s, last config "
              f"after {s['config_s']} s (bound {s['bound_s']} s)")
    print(f"churn: {r['churn']}")
    print("all invariants held" if r["held"] else "INVARIANTS FAILED")


def main():
    p = argparse.ArgumentParser(
        description="Soak and chaos run of a zone under roceswd (see bench/soak.sh).")
    p.add_argument("--duration", type=float, default=600, help="seconds (default 600)")
    p.add_argument("--ci", action="store_true",
                   help="every fault and variant once, each after a clean round, then stop")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--frames", type=int, default=300,
                   help="lossless frames per host per round (default 300)")
    p.add_argument("--rate", type=int, default=300, help="lossless frames/s per host")
    p.add_argument("--lossy-rate", type=int, default=100, help="lossy frames/s per host")
    p.add_argument("--warmup", type=float, default=120,
                   help="seconds of a process's life before its RSS must stay flat "
                   "(default 120)")
    p.add_argument("--warmup-reloads", type=int, default=2,
                   help="reloads with table writes a dataplane applies before its RSS must "
                   "stay flat (default 2)")
    p.add_argument("--rss-bound-dataplane", type=float, default=4, help="MiB (default 4)")
    p.add_argument("--rss-bound-daemon", type=float, default=2, help="MiB (default 2)")
    p.add_argument("--startup-bound", type=float, default=20,
                   help="seconds a restarted dataplane may take past roceswd's backoff")
    p.add_argument("--metrics-port", type=int, default=19531)
    p.add_argument("--report", help="write the report as JSON here")
    p.add_argument("--workdir", help="scratch directory (default: a new one in /tmp, kept)")
    a = p.parse_args()
    faulthandler.register(signal.SIGUSR1)  # kill -USR1: where every thread is
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleans up as it leaves
    if os.geteuid() != 0:
        sys.exit("soak: needs root (network namespaces, veth)")
    import tempfile
    a.workdir = a.workdir or tempfile.mkdtemp(prefix="rocesw-soak-")
    os.makedirs(a.workdir, exist_ok=True)
    print(f"soak: work directory {a.workdir}", flush=True)
    s = Soak(a)
    try:
        s.setup()
        s.run()
        report = s.finish()
    finally:
        s.close()
    print_report(report)
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report, f, indent=1)
    sys.exit(0 if report["held"] else 1)


if __name__ == "__main__":
    main()
