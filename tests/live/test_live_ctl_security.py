"""Live: the dataplane's control socket seen by a careless or hostile local user (docs/security.md).

- reload never opens a path for a client: a request naming a file (here a root-only file whose
  first line is a secret marker, as /etc/shadow's is) is refused without reading it; the same
  file passed open by root is refused as not a config, and the reply never holds the marker; a
  member of the control group cannot get it read (it cannot open it, and the dataplane opens
  nothing); a well-formed config passed open (`rocesw reload`) is applied.
- A FIFO named or passed does not block the main lcore: `hello` is answered meanwhile.
- A zero-length request gets an error reply; prefixes such as 10.0.0.0/016 are refused by
  set_route; every change request is logged with the peer's uid, gid and pid (SO_PEERCRED).
- 1000 clients that connect, send and close without reading, while a flood is forwarded: no
  connect() fails, a normal client then gets its answer, the flood is conserved; 16 clients that
  stay hold every slot and a 17th is told it is busy.
- DPDK's telemetry socket is reachable by root only."""
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from kernel_drops import Cable  # noqa: E402
from common import ROCESW, dataplane_cmd, require_root, tmpdir, write_pcap  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Lab, four_uplink_config,  # noqa: E402
                    wait_for_line)

PREFIX = "rswsec"
NOBODY = 65534  # uid of nobody, gid of nogroup: the control group here
MARKER = "rsw-secret-marker-7d3e"
HASH = """HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf: [{base: L4, offset: 13, length: 3, match: {ip_protocol: 17, l4_dst_port: 4791}}]"""

# A sender that runs until it is stopped (SIGTERM), then prints how many frames it sent: the
# test decides when the flood ends, not a frame count racing the churn.
FLOOD = r"""
import signal, socket, sys, time
from scapy.utils import RawPcapReader
frames = [d for d, _ in RawPcapReader(sys.argv[1])]
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
sent = 0
print("started", flush=True)
while not stop:
    for f in frames:
        s.send(f)
        sent += 1
    time.sleep(0.002)  # ~16k frames/s: every frame is kept by the veths and the captures
print(sent, flush=True)
"""


def request(path, obj=None, raw=None, fds=(), timeout=10):
    """One message (with descriptors passed as SCM_RIGHTS) on the control socket; the reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        data = raw if raw is not None else json.dumps(obj).encode()
        if fds:
            socket.send_fds(s, [data], list(fds))
        else:
            s.send(data)
        return json.loads(s.recv(1 << 22))
    finally:
        s.close()


def churn(args):
    """n clients: connect, send a request, close without reading. Returns the failed connects."""
    path, n = args
    failures = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)  # a non-blocking connect: a full backlog is EAGAIN, not a wait
        try:
            s.connect(path)
            s.send(b'{"v":1,"op":"hello"}')
        except OSError as e:
            failures.append(e.errno)
        finally:
            s.close()
    return failures


class LiveCtlSecurity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        os.chmod(cls.dir, 0o755)  # the control group's member reaches the socket
        cls.base = four_uplink_config("rsws", "live-sec", HASH,
                                      "hash_policy: dest_qp, buckets: 256, resilient: true")
        cls.cfg = os.path.join(cls.dir, "switch.yaml")
        with open(cls.cfg, "w") as f:
            f.write(cls.base)
        cls.secret = os.path.join(cls.dir, "shadow")
        with open(cls.secret, "w") as f:
            f.write(f"root:$6${MARKER}$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
        os.chmod(cls.secret, 0o600)
        cls.sock = os.path.join(cls.dir, "dp.sock")
        cls.lab = Lab("rsws")
        try:
            cls.h0 = cls.lab.host("h0", "rsws-h0", HOST_MAC)
            cls.ups = [cls.lab.host(f"u{i}", f"rsws-u{i}", UPLINK_MACS[i]) for i in range(4)]
            cls.dp = cls.lab.start(dataplane_cmd(PREFIX, "--config", cls.cfg, "--control-socket",
                                                 cls.sock, "--control-group", "nogroup"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(cls.dp.stderr, "forwarding")
            # the dataplane's log, kept (and drained, so it never blocks on a full pipe)
            cls.log = []
            cls.drain = threading.Thread(target=lambda: cls.log.extend(iter(cls.dp.stderr.readline, "")),
                                         daemon=True)
            cls.drain.start()
            threading.Thread(target=lambda: cls.dp.stdout.read(), daemon=True).start()
        except BaseException:
            cls.lab.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def req(self, obj=None, **kw):
        return request(self.sock, obj, **kw)

    def generation(self):
        return self.req({"v": 1, "op": "show", "what": "config"})["result"]["generation"]

    def as_member(self, *cmd):
        """cmd run as nobody:nogroup, a member of the control group and nothing more."""
        return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                               "--clear-groups", *cmd], capture_output=True, text=True, timeout=60)

    def wait_log(self, text, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(text in line for line in self.log):
                return [line for line in self.log if text in line]
            time.sleep(0.05)
        self.fail(f"'{text}' not in the dataplane's log: {''.join(self.log[-20:])}")

    def test_1_no_file_read_for_a_client(self):
        gen = self.generation()
        # the path alone: refused, the file not read
        r = self.req({"v": 1, "op": "reload", "config": self.secret})
        self.assertFalse(r["ok"])
        self.assertIn("opens no file for a client", r["error"])
        self.assertNotIn(MARKER, json.dumps(r))
        # "files" without descriptors: refused
        r = self.req({"v": 1, "op": "reload", "files": [self.secret]})
        self.assertFalse(r["ok"])
        self.assertIn("names 1 files but 0 descriptors", r["error"])
        # passed open (root may read it): not a config, and its text is not quoted
        with open(self.secret) as f:
            r = self.req({"v": 1, "op": "reload", "files": ["shadow"]}, fds=[f.fileno()])
        self.assertFalse(r["ok"])
        self.assertIn("shadow:1: (top level): unknown table", r["error"])
        self.assertNotIn(MARKER, json.dumps(r))
        self.assertNotIn("root", r["error"])
        # a YAML syntax error names the place and what was expected, not the text
        bad = os.path.join(self.dir, "syntax.yaml")
        with open(bad, "w") as f:
            f.write(f"PORT:\n  {MARKER}: {{speed: 1\n")
        with open(bad) as f:
            r = self.req({"v": 1, "op": "reload", "files": ["syntax.yaml"]}, fds=[f.fileno()])
        self.assertRegex(r["error"], r"^syntax\.yaml:\d+:\d+: YAML syntax error: ")
        self.assertNotIn(MARKER, r["error"])
        # a member of the control group: cannot open the file, and the dataplane opens nothing
        m = self.as_member(ROCESW, "reload", self.secret, "--socket", self.sock)
        self.assertEqual(m.returncode, 1)
        self.assertIn("cannot open: Permission denied", m.stderr)
        code = ("import json,socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                "s.connect(sys.argv[1])\ns.send(json.dumps({'v':1,'op':'reload','config':sys.argv[2]})"
                ".encode())\nprint(s.recv(65536).decode())")
        m = self.as_member(sys.executable, "-c", code, self.sock, self.secret)
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertIn("opens no file for a client", m.stdout)
        self.assertNotIn(MARKER, m.stdout)
        self.assertEqual(self.generation(), gen, "nothing applied")
        # and the request was logged with who sent it
        lines = self.wait_log(f"control: uid {NOBODY} gid {NOBODY} pid ")
        self.assertIn('"op":"reload"', lines[-1])
        self.assertIn("refused: reload: the dataplane opens no file", lines[-1])
        self.assertNotIn(MARKER, "".join(self.log))

    def test_2_reload_passed_open(self):
        """`rocesw reload F` as a control-group member: its file, passed open, is applied."""
        gen = self.generation()
        new = os.path.join(self.dir, "switch2.yaml")
        with open(new, "w") as f:
            f.write(self.base + '  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')
        os.chmod(new, 0o644)
        m = self.as_member(ROCESW, "reload", new, "--socket", self.sock)
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertEqual(m.stdout.strip(), f"ok: 1 table writes, tables at generation {gen + 1}")
        routes = self.req({"v": 1, "op": "show", "what": "routes"})["result"]
        self.assertIn("10.3.0.0/16", [x["prefix"] for x in routes])
        self.assertEqual(self.req({"v": 1, "op": "show", "what": "config"})["result"]["config"], new)
        line = self.wait_log(f"control: uid {NOBODY} gid {NOBODY}")[-1]
        self.assertIn(f"ok, generation {gen + 1}", line)
        # back to the start: root's reload of the first file
        r = subprocess.run([ROCESW, "reload", self.cfg, "--socket", self.sock], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("10.3.0.0/16",
                         [x["prefix"] for x in self.req({"v": 1, "op": "show", "what": "routes"})["result"]])

    def test_3_fifo_does_not_block(self):
        """A FIFO nobody writes to, named by path or passed open: refused at once, and the main
        lcore answers hello meanwhile (it once blocked in open() until someone wrote)."""
        fifo = os.path.join(self.dir, "fifo.yaml")
        os.mkfifo(fifo)
        try:
            t0 = time.monotonic()
            r = self.req({"v": 1, "op": "reload", "config": fifo}, timeout=5)
            self.assertFalse(r["ok"])
            self.assertIn("opens no file for a client", r["error"])
            self.assertTrue(self.req({"v": 1, "op": "hello"}, timeout=5)["ok"])
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            try:
                r = self.req({"v": 1, "op": "reload", "files": ["fifo.yaml"]}, fds=[fd], timeout=5)
            finally:
                os.close(fd)
            self.assertEqual(r["error"], "fifo.yaml: is a FIFO; expected a config file")
            self.assertTrue(self.req({"v": 1, "op": "hello"}, timeout=5)["ok"])
            # a directory passed open is named as such too
            dfd = os.open(self.dir, os.O_RDONLY)
            try:
                r = self.req({"v": 1, "op": "reload", "files": ["dir"]}, fds=[dfd], timeout=5)
            finally:
                os.close(dfd)
            self.assertEqual(r["error"], "dir: is a directory; expected a config file")
            self.assertLess(time.monotonic() - t0, 10)
        finally:
            # an old dataplane stuck in open() would be released by a writer
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            os.unlink(fifo)

    def test_4_small_things(self):
        gen = self.generation()
        r = self.req(raw=b"")
        self.assertFalse(r["ok"])
        self.assertIn("empty request", r["error"])
        for pfx in ("10.9.0.0/016", "10.9.0.0/ 16", "10.9.0.0/+16", " 10.9.0.0/16", "10.9.0.0/16 ",
                    "010.9.0.0/16", "10.9.0.0/0x10"):
            r = self.req({"v": 1, "op": "set_route", "prefix": pfx, "nexthop": "10.255.0.7"})
            self.assertFalse(r["ok"], pfx)
            self.assertIn("\"prefix\" must be an IPv4 or IPv6 prefix", r["error"], pfx)
        self.assertEqual(self.generation(), gen, "nothing changed")
        # descriptors with an op that reads no file, and more names than descriptors
        with open(self.cfg) as f:
            r = self.req({"v": 1, "op": "hello", "files": ["x"]}, fds=[f.fileno()])
            self.assertEqual(r["error"], "hello takes no files")
            r = self.req({"v": 1, "op": "reload", "files": ["a", "b"]}, fds=[f.fileno()])
            self.assertIn("names 2 files but 1 descriptors", r["error"])
        # a change is logged with the peer's credentials (root here, and this process's pid)
        r = self.req({"v": 1, "op": "set_route", "prefix": "10.9.0.0/16", "nexthop": "10.255.0.7"})
        self.assertTrue(r["ok"], r)
        line = self.wait_log('"prefix":"10.9.0.0/16"')[-1]
        self.assertIn(f"control: uid 0 gid 0 pid {os.getpid()}: ", line)
        self.assertTrue(self.req({"v": 1, "op": "del_route", "prefix": "10.9.0.0/16"})["ok"])

    def test_5_churn_while_forwarding(self):
        """1000 clients (4 processes of 250) connect, send and close without reading while a
        flood is forwarded: no connect fails, all are served, then a client gets its answer;
        every flood frame received is transmitted (conservation, no drops)."""
        c0 = self.req({"v": 1, "op": "show", "what": "counters"})["result"]
        ctl0 = self.req({"v": 1, "op": "show", "what": "control"})["result"]
        flood = [rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152, dqp=0x1000 + qp,
                              psn=qp, smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(64))
                 for qp in range(32)]
        pcap = write_pcap(os.path.join(self.dir, "flood.pcap"), flood)
        cable = Cable(self.dp.pid, "rsws-h0", self.h0)
        sender = subprocess.Popen(["ip", "netns", "exec", self.h0, sys.executable, "-c", FLOOD,
                                   pcap], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(sender.stdout.readline().strip(), "started")
            t0 = time.monotonic()
            with multiprocessing.Pool(4) as pool:
                failures = [e for f in pool.map(churn, [(self.sock, 250)] * 4) for e in f]
            churn_s = time.monotonic() - t0
            t1 = time.monotonic()
            hello = self.req({"v": 1, "op": "hello"}, timeout=5)
            answer_ms = (time.monotonic() - t1) * 1000
        finally:
            sender.send_signal(signal.SIGTERM)
            out, _ = sender.communicate(timeout=30)
        sent = int(out.strip())
        self.assertEqual(failures, [], "no connect() failed")
        self.assertTrue(hello["ok"])
        # the switch's own counters settle once the flood is out of its queues
        deadline = time.time() + 10
        while True:
            c = self.req({"v": 1, "op": "show", "what": "counters"})["result"]
            rx = c["ports"][0]["rx_packets"] - c0["ports"][0]["rx_packets"]
            if (rx >= sent and c["conservation"]["queued"] == 0) or time.time() > deadline:
                break
            time.sleep(0.1)
        ctl = self.req({"v": 1, "op": "show", "what": "control"})["result"]
        # under ThreadSanitizer (tests/tsan_run.py) the worker runs several times slower and,
        # off its CPU while 4 churning processes share the 2 cores, lets its af_packet ring
        # overflow: there, frames the kernel counted as dropped before the switch read them
        # are the only ones allowed missing
        lost = cable.dropped() if os.environ.get("ROCESW_TSAN") else 0
        self.assertEqual(rx + lost, sent, "every frame sent was received")
        cons, cons0 = c["conservation"], c0["conservation"]
        self.assertTrue(cons["holds"], cons)
        self.assertEqual(cons["transmitted"] - cons0["transmitted"], rx, "all forwarded")
        self.assertEqual(cons["dropped"], cons0["dropped"])
        self.assertGreaterEqual(ctl["requests"] - ctl0["requests"], 1000, "every client served")
        self.assertEqual(ctl["too_many_clients"], ctl0["too_many_clients"], "nobody turned away")
        self.assertEqual(ctl["errors"], ctl0["errors"])
        print(f"\nchurn: 1000 clients in {churn_s:.2f} s, 0 connect failures, "
              f"{ctl['hung_up'] - ctl0['hung_up']} hung-up peers reaped, next hello in "
              f"{answer_ms:.1f} ms; flood {sent} frames, all forwarded", file=sys.stderr)

    def test_6_busy_reply_when_truly_full(self):
        """16 clients that stay connected hold every slot: the 17th is told why."""
        held = []
        try:
            for _ in range(16):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(self.sock)
                s.send(b'{"v":1,"op":"hello"}')
                self.assertTrue(json.loads(s.recv(4096))["ok"])  # accepted, in a slot
                held.append(s)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(5)
            s.connect(self.sock)
            r = json.loads(s.recv(4096))
            s.close()
            self.assertFalse(r["ok"])
            self.assertEqual(r["error"], "busy: 16 clients connected, the most served at once; "
                             "try again")
        finally:
            for s in held:
                s.close()
        self.assertTrue(self.req({"v": 1, "op": "hello"})["ok"], "slots free again")

    def test_7_telemetry_is_root_only(self):
        """DPDK's telemetry socket lives in the EAL runtime directory, which DPDK creates 0700:
        a control-group member cannot reach it, root can."""
        rundir = f"/var/run/dpdk/{PREFIX}"
        st = os.stat(rundir)
        self.assertEqual((st.st_mode & 0o777, st.st_uid), (0o700, 0))
        sock = os.path.join(rundir, "dpdk_telemetry.v2")
        code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                "try:\n s.connect(sys.argv[1])\nexcept OSError as e:\n print('connect', e.errno)")
        m = self.as_member(sys.executable, "-c", code, sock)
        self.assertIn("connect 13", m.stdout, m.stderr)  # EACCES
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(sock)
        self.assertIn(b'"version"', s.recv(4096))
        s.close()


if __name__ == "__main__":
    unittest.main(verbosity=1)
