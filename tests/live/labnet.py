"""A small lab in network namespaces: hosts joined by veth pairs to the switch's af_packet ports.
Addresses exist only inside the namespaces made here; everything is removed on close.

The tests wait on events, never on the clock: `Lab.socket(ns)` gives the test process a raw
socket on a namespace's eth0 (frames leave when the test says, no interpreter to start),
`Flood` sends until stopped, `Control` reads the switch's counters on its control socket, and
`wait_until` / `wait_drained` / `wait_captured` poll those counters (or a capture's record
count, up to what the counters say the switch sent). Their timeouts only keep a broken switch
from hanging the suite; no assertion depends on how long anything took by the wall clock."""
import ctypes
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
HANG_GUARD = 120  # seconds: only a hung or broken switch takes this long


def sh(*cmd, check=True, ns=None):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Lab:
    def __init__(self, tag):
        self.tag = tag
        self.namespaces = []
        self.links = []
        self.procs = []
        self.sockets = []
        self.floods = []

    def host(self, name, switch_if, mac):
        """Namespace `name` with eth0 (MAC mac) cabled to `switch_if` in the root namespace."""
        ns = f"{self.tag}-{name}"
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", switch_if, check=False)
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "link", "add", switch_if, "type", "veth", "peer", "name", f"{switch_if}p")
        self.links.append(switch_if)
        sh("ip", "link", "set", f"{switch_if}p", "netns", ns)
        sh("ip", "link", "set", f"{switch_if}p", "name", "eth0", ns=ns)
        sh("ip", "link", "set", "eth0", "address", mac, ns=ns)
        for dev, where in ((switch_if, None), ("eth0", ns)):
            # no IPv6 autoconfiguration chatter on the lab links
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=where, check=False)
            sh("ip", "link", "set", dev, "up", ns=where)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        return ns

    def socket(self, ns, dev="eth0", ethertype=0):
        """A raw AF_PACKET socket on `dev` inside namespace `ns`, owned by this process: made
        after setns(2) on this thread, which then returns to its own namespace. It receives the
        frames of `ethertype` (0x0003, ETH_P_ALL: every frame; 0: none, it only sends)."""
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
        try:
            if _libc.setns(there, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {ns}")
            try:
                # socket(2) takes the protocol in network order; Python's bind in host order
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
                s.bind((dev, ethertype))
            finally:
                if _libc.setns(own, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back")
        finally:
            os.close(own)
            os.close(there)
        self.sockets.append(s)
        return s

    def start(self, cmd, ns=None, **kw):
        if ns:
            cmd = ["ip", "netns", "exec", ns] + list(cmd)
        p = subprocess.Popen(cmd, **kw)
        self.procs.append(p)
        return p

    def capture(self, ns, path, bpf="udp port 4791"):
        p = self.start(["tcpdump", "-i", "eth0", "-U", "-n", "-s", "0", "-w", path, bpf], ns=ns,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once the socket is ready
        deadline = time.time() + 10
        while time.time() < deadline:
            line = p.stderr.readline()
            if "listening on" in line or not line:
                break
        return p

    @staticmethod
    def stop(p, sig=signal.SIGINT, timeout=30):
        if p.poll() is None:
            p.send_signal(sig)
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def close(self):
        for f in self.floods:
            f._halt.set()
            f.join(10)
        for s in self.sockets:
            s.close()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()
        for ns in self.namespaces:
            sh("ip", "netns", "del", ns, check=False)
        for link in self.links:
            sh("ip", "link", "del", link, check=False)


def captured(path):
    """Frames tcpdump has written to path so far (it hands them over a ring block at a time)."""
    from scapy.utils import RawPcapReader
    if not os.path.exists(path) or os.path.getsize(path) <= 24:
        return 0  # not even a pcap header yet
    r = RawPcapReader(path)
    try:
        return sum(1 for _ in r)
    finally:
        r.close()


def finish(test, dp, tcpdumps, stats):
    """Stops the captures, then the dataplane (which drains and writes --stats-json); asserts it
    exited 0 and returns its final counters and its stderr."""
    for p in tcpdumps:
        Lab.stop(p)
    rc = Lab.stop(dp)
    out, err = dp.stdout.read(), dp.stderr.read()
    test.assertEqual(rc, 0, f"dataplane exit {rc}: {out} {err}")
    with open(stats) as f:
        return json.load(f), err


def wait_in_file(path, text, count=1, timeout=60):
    """Waits until the file (a daemon's log) holds text count times."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path) as f:
            if f.read().count(text) >= count:
                return
        time.sleep(0.05)
    with open(path) as f:
        raise AssertionError(f"'{text}' x{count} not in {path}: {f.read()}")


def wait_for_line(stream, text, timeout=60):
    """Reads lines until one holds text; returns the lines read."""
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"'{text}' not seen; got: {''.join(seen)}")


ROUTER_MAC = "02:00:00:00:01:00"
HOST_MAC = "02:00:00:00:10:01"
UPLINK_MACS = [f"02:00:00:00:20:0{i}" for i in range(4)]


def four_uplink_config(tag, hostname, hash_tables, group_fields):
    """A switch config: host h0 (10.1.0.1) on Ethernet0 and uplinks u0-u3 on Ethernet8-32, af_packet
    ports on the veths TAG-h0 and TAG-u0..3, 10 Gb/s; 10.2.0.0/16 over the ECMP group `uplinks`
    of the four. hash_tables: YAML of SWITCH_HASH / HASH_POLICY; group_fields: more fields of
    the group (e.g. "hash_policy: dest_qp")."""
    ports = "\n".join(f'  Ethernet{8 * i}: {{speed: 10000, role: {"host" if i == 0 else "uplink"}, '
                      f'devargs: "net_af_packet{i},iface={tag}-{"h0" if i == 0 else f"u{i - 1}"}"}}'
                      for i in range(5))
    neigh = "\n".join(f'  "Ethernet{8 * (i + 1)}|10.255.0.{2 * i + 1}": {{neigh: "{UPLINK_MACS[i]}"}}'
                      for i in range(4))
    return f"""DEVICE_METADATA:
  localhost: {{hostname: {hostname}, mac: "{ROUTER_MAC}"}}
PORT:
{ports}
{hash_tables}
NEIGH:
  "Ethernet0|10.1.0.1": {{neigh: "{HOST_MAC}"}}
{neigh}
NEXTHOP_GROUP:
  uplinks: {{nexthop: "10.255.0.1,10.255.0.3,10.255.0.5,10.255.0.7", {group_fields}}}
STATIC_ROUTE:
  "10.1.0.0/24": {{nexthop: 10.1.0.1}}
  "10.2.0.0/16": {{nexthop_group: uplinks}}
"""


def send(sock, frames, gap=0.0):
    """Sends frames (bytes or scapy packets) out of a lab socket, gap seconds apart."""
    for f in frames:
        sock.send(bytes(f))
        if gap:
            time.sleep(gap)
    return len(frames)


def send_interleaved(pairs):
    """pairs: [(socket, frames)]: one frame of each in turn, so several hosts' traffic reaches
    the switch together however the machine schedules processes."""
    lists = [[bytes(f) for f in frames] for _, frames in pairs]
    for k in range(max(len(x) for x in lists)):
        for (sock, _), frames in zip(pairs, lists):
            if k < len(frames):
                sock.send(frames[k])


class Flood(threading.Thread):
    """Sends `frames` round and round out of `sock` (gap seconds apart) until stop(): a flood
    that lasts as long as the test needs it, not a fixed count that may run out first."""

    def __init__(self, lab, sock, frames, gap=0.0):
        super().__init__(daemon=True)
        self.sock, self.frames, self.gap = sock, [bytes(f) for f in frames], gap
        self.sent = 0
        self._halt = threading.Event()
        lab.floods.append(self)
        self.start()

    def run(self):
        while not self._halt.is_set():
            self.sock.send(self.frames[self.sent % len(self.frames)])
            self.sent += 1
            if self.gap:
                time.sleep(self.gap)

    def stop(self):
        """Stops the flood; the number of frames it sent."""
        self._halt.set()
        if self.is_alive():
            self.join()
        return self.sent


class Control:
    """Requests on the dataplane's control socket (docs/control.md)."""

    def __init__(self, path):
        self.path = path

    def request(self, obj=None, raw=None):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(30)
        try:
            s.connect(self.path)
            s.send(raw if raw is not None else json.dumps(obj).encode())
            return json.loads(s.recv(1 << 22))
        finally:
            s.close()

    def show(self, what):
        r = self.request({"v": 1, "op": "show", "what": what})
        if not r.get("ok"):
            raise AssertionError(f"show {what}: {r}")
        return r["result"] if "result" in r else r

    def counters(self):
        return self.show("counters")

    def port(self, name):
        return next(p for p in self.counters()["ports"] if p["name"] == name)


def wait_until(pred, what, timeout=HANG_GUARD, every=0.02):
    """Polls pred() until it returns something true (returned); fails naming `what` if the
    hang guard runs out."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what} after {timeout} s")
        time.sleep(every)


def drained(c, received):
    """The counters `c` show at least `received` frames in and every one of them accounted for:
    nothing queued, received = transmitted + dropped + consumed."""
    k = c["conservation"]
    return (k["received"] >= received and k["queued"] == 0 and
            k["received"] == k["transmitted"] + k["dropped"] + k["consumed"])


def wait_drained(ctl, received):
    """Waits until the switch has taken in `received` frames (since it started) and holds none of
    them; returns those counters."""
    return wait_until(lambda: (lambda c: drained(c, received) and c)(ctl.counters()),
                      f"the switch to receive {received} frames and send them on")


_counted = {}


def pcap_count(path):
    """Records in a pcap file as written so far (a partly written last record not counted).
    Reads on from where the last call stopped, so polling a growing capture stays cheap."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return 0
    with f:
        st = os.fstat(f.fileno())
        key = (path, st.st_ino)
        off, n, order = _counted.get(key, (24, 0, None))
        if order is None:
            magic = f.read(4)
            if len(magic) < 4:
                return 0
            order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        f.seek(off)
        data = f.read()
    pos = 0
    while pos + 16 <= len(data):
        incl = struct.unpack_from(order + "I", data, pos + 8)[0]
        if pos + 16 + incl > len(data):
            break
        n, pos = n + 1, pos + 16 + incl
    _counted[key] = (off + pos, n, order)
    return n


def wait_captured(path, n):
    """Waits until tcpdump has written at least n frames to path (n from the switch's counters:
    what it sent on that link)."""
    return wait_until(lambda: pcap_count(path) >= n, f"{n} frames in {path}")
