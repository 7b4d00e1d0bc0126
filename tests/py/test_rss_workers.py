"""Several RX queues per port over several workers (`rocesw-dataplane --rxq N`, docs/dataplane.md
"Workers and queues"): two workers (EAL -l 0-2) forward a host port's two RX queues into the same
egress ports, whose VOQs then take two producers. pcap ports, no namespaces: the host port has
one rx_pcap per queue and the test plays the NIC's RSS, putting each flow on the queue its own
hash names. Checked against what was sent, not against the dataplane's own output: every packet
is delivered exactly once (flow and sequence number in the payload), each flow's packets leave
in the order they came and all by one ECMP member, both workers forwarded a share of the packets,
and the counters balance (received = transmitted + dropped + consumed + queued)."""
import json
import os
import signal
import socket
import struct
import subprocess
import time
import unittest
import zlib

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader

from common import dataplane_cmd, tmpdir

SWITCH_MAC = "02:00:00:00:01:00"
FLOWS = 256
PER_FLOW = 400
MAGIC = b"RSSQ"
# main lcore and two workers on this 2-vCPU machine kind: worker 0 shares a CPU with the main
# lcore, which sleeps between its 10 ms control polls
LCORES = ("--lcores", "0@0,1@0,2@1")

CONFIG = """\
DEVICE_METADATA:
  localhost: {{hostname: rss, mac: "{mac}"}}
PORT:
  Ethernet0:   {{speed: 100000, role: host,   devargs: "net_pcap_h,{h_rx},tx_pcap={d}/out-h.pcap"}}
  Ethernet256: {{speed: 100000, role: uplink, devargs: "net_pcap_u0,{u_rx},tx_pcap={d}/out-u0.pcap"}}
  Ethernet264: {{speed: 100000, role: uplink, devargs: "net_pcap_u1,{u_rx},tx_pcap={d}/out-u1.pcap"}}
NEIGH:
  "Ethernet256|10.255.0.1": {{neigh: "02:00:00:00:20:01"}}
  "Ethernet264|10.255.0.3": {{neigh: "02:00:00:00:20:03"}}
NEXTHOP_GROUP:
  uplinks: {{nexthop: "10.255.0.1,10.255.0.3"}}
STATIC_ROUTE:
  "10.0.0.0/8": {{nexthop_group: uplinks}}
"""


_TEMPLATES = {}


def flow_frame(flow, seq):
    """Flow `flow` (its own 5-tuple), packet number seq of it, said in the payload (UDP checksum
    0, none in IPv4, so the sequence number is written into a built frame)."""
    if flow not in _TEMPLATES:
        _TEMPLATES[flow] = bytes(
            Ether(src="02:00:00:00:10:01", dst=SWITCH_MAC) /
            IP(src=f"192.168.{flow // 200}.{flow % 200 + 1}", dst=f"10.{flow % 7}.0.{flow % 250 + 1}",
               ttl=64) /
            UDP(sport=10000 + flow, dport=5000, chksum=0) / Raw(MAGIC + b"\0" * 58))
    t = _TEMPLATES[flow]
    at = t.find(MAGIC) + len(MAGIC)
    return t[:at] + struct.pack("!II", flow, seq) + t[at + 8:]


def write_frames(path, frames):
    """A classic pcap (microseconds, Ethernet) of raw frames, written directly: scapy's writer
    takes tens of seconds for the test's thousands of frames."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)) + fr)
    return path


def rss_queue(flow, n_queues):
    """The test's RSS: a hash of the flow's 5-tuple picks its queue, the same for all its packets."""
    return zlib.crc32(struct.pack("!II", flow, 10000 + flow)) % n_queues


def interleaved(flows):
    """Round-robin over the flows, so both queues hold every flow's packets spread in time."""
    return [(f, s) for s in range(PER_FLOW) for f in flows]


def received(path):
    """[(flow, seq)] in the order the port sent them."""
    out = []
    r = RawPcapReader(path)
    try:
        for data, _ in r:
            at = data.find(MAGIC)
            if at >= 0:
                out.append(struct.unpack_from("!II", data, at + len(MAGIC)))
    finally:
        r.close()
    return out


def check_delivery(test, outputs, sent, dropped=0):
    """Every (flow, seq) sent is received exactly once, but for as many as the switch counted
    as dropped; a flow's packets leave by one port, in order. outputs: {port: [(flow, seq)]}."""
    seen = {}
    for port, pkts in outputs.items():
        last = {}
        for flow, seq in pkts:
            test.assertNotIn((flow, seq), seen, f"flow {flow} packet {seq} delivered twice")
            seen[(flow, seq)] = port
            test.assertGreater(seq, last.get(flow, -1),
                               f"flow {flow}: packet {seq} after {last.get(flow)} on {port}")
            last[flow] = seq
    missing = sorted(set(sent) - set(seen))
    if len(missing) != dropped:
        test.fail(f"{len(missing)} packets not delivered, {dropped} counted as dropped; e.g. "
                  f"{missing[:5]}")
    if set(seen) - set(sent):
        test.fail("packets delivered that were not sent")
    by_flow = {}
    for (flow, _), port in seen.items():
        by_flow.setdefault(flow, set()).add(port)
    split = {f: p for f, p in by_flow.items() if len(p) > 1}
    if split:
        test.fail(f"flows over several ECMP members: {list(split.items())[:3]}")


def wait_counters(sock, proc, want):
    """Polls the control socket until the switch received `want` packets and holds none."""
    deadline = time.monotonic() + 120
    while not os.path.exists(sock):
        if proc.poll() is not None:
            raise AssertionError(proc.communicate()[1])
        if time.monotonic() > deadline:
            raise AssertionError("no control socket")
        time.sleep(0.05)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    try:
        while True:
            s.send(json.dumps({"v": 1, "op": "show", "what": "counters"}).encode())
            r = json.loads(s.recv(1 << 22))["result"]
            c = r["conservation"]
            if c["received"] >= want and c["queued"] == 0:
                return r
            if time.monotonic() > deadline:
                raise AssertionError(f"counters stuck at {c}")
            time.sleep(0.05)
    finally:
        s.close()


class RssWorkers(unittest.TestCase):
    def forward(self, d, queues, want):
        """Runs the switch with one host RX queue per capture in `queues` (lists of frames)
        until it received `want` packets and holds none; returns the uplinks' (flow, seq) in
        the order they left and the final counters."""
        h_rx = [f"rx_pcap={write_frames(os.path.join(d, f'in-q{q}.pcap'), frames)}"
                for q, frames in enumerate(queues)]
        empty = write_frames(os.path.join(d, "empty.pcap"), [])
        cfg = os.path.join(d, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(mac=SWITCH_MAC, d=d, h_rx=",".join(h_rx),
                                  u_rx=",".join([f"rx_pcap={empty}"] * len(queues))))
        sock, js = os.path.join(d, "ctl.sock"), os.path.join(d, "stats.json")
        cmd = dataplane_cmd(f"rss-{os.getpid()}-{os.path.basename(d)}", "--config", cfg,
                            "--rxq", str(len(queues)), "--control-socket", sock,
                            "--stats-json", js, lcores=LCORES)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_counters(sock, proc, want)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, out + err)
        with open(js) as f:
            stats = json.load(f)
        return {p: received(os.path.join(d, f"out-{p}.pcap")) for p in ("u0", "u1")}, stats

    def test_two_workers_two_queues(self):
        d = tmpdir()
        queues = [[flow_frame(f, s) for f, s in interleaved(
            [f for f in range(FLOWS) if rss_queue(f, 2) == q])] for q in (0, 1)]
        total = FLOWS * PER_FLOW
        outputs, stats = self.forward(d, queues, total)
        sent = [(f, s) for f in range(FLOWS) for s in range(PER_FLOW)]
        c = stats["conservation"]
        # pcap ports read as fast as the workers poll and write slower: the buffer's admission
        # may drop (pg_threshold), counted; every packet not dropped is delivered once
        check_delivery(self, outputs, sent, c["dropped"])
        self.assertGreater(c["transmitted"], total // 4, c)
        host = next(p for p in stats["ports"] if p["name"] == "Ethernet0")
        self.assertEqual(host["rx_queues"], 2)
        self.assertEqual(host["rx_packets"], total)
        # the flows' share per queue, from the test's own hash: each worker polls one queue of
        # the host port, so it received exactly that queue's packets
        per_queue = [sum(PER_FLOW for f in range(FLOWS) if rss_queue(f, 2) == q) for q in (0, 1)]
        self.assertTrue(all(per_queue), per_queue)
        workers = sorted(w["rx_packets"] for w in stats["workers"])
        self.assertEqual(workers, sorted(per_queue), stats["workers"])
        # both uplinks carried flows of both queues, so both VOQs had two producers
        self.assertTrue(outputs["u0"] and outputs["u1"], {k: len(v) for k, v in outputs.items()})
        self.assertTrue(c["holds"], c)
        self.assertEqual((c["received"], c["transmitted"] + c["dropped"], c["consumed"],
                          c["queued"]), (total, total, 0, 0), c)
        self.assertEqual(c["transmitted"], len(outputs["u0"]) + len(outputs["u1"]), c)

    def test_check_sees_reordering(self):
        """The checks can fail: a flow spread over both queues (what RSS never does) is forwarded
        by two workers at once and, with enough packets, leaves out of order; the delivery check
        must say so. One flow, alternate packets on each queue."""
        d = tmpdir()
        n = PER_FLOW * 40
        queues = [[flow_frame(0, s) for s in range(n) if s % 2 == q] for q in (0, 1)]
        outputs, stats = self.forward(d, queues, n)
        with self.assertRaises(AssertionError):
            check_delivery(self, outputs, [(0, s) for s in range(n)],
                           stats["conservation"]["dropped"])

    def test_rss_device_and_fewer_queues(self):
        """A device that hashes (net_null reports RSS offloads) is configured with RSS over two
        queues and both workers poll one (both receive; net_null makes frames on every queue);
        a pcap port with one rx_pcap gets one queue, and stderr says so."""
        d = tmpdir()
        one = write_frames(os.path.join(d, "one.pcap"), [flow_frame(0, 0)])
        cfg = os.path.join(d, "null.yaml")
        with open(cfg, "w") as f:
            f.write(f"""DEVICE_METADATA:
  localhost: {{hostname: rss, mac: "{SWITCH_MAC}"}}
PORT:
  Ethernet0:   {{speed: 100000, role: host,   devargs: "net_null_rss0"}}
  Ethernet256: {{speed: 100000, role: uplink, devargs: "net_pcap_one,rx_pcap={one},tx_pcap={d}/o.pcap"}}
""")
        js = os.path.join(d, "stats.json")
        r = subprocess.run(dataplane_cmd(f"rssn-{os.getpid()}", "--config", cfg, "--rxq", "2",
                                         "--duration", "1", "--stats-json", js, lcores=LCORES),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("port Ethernet256 (net_pcap_one", r.stderr)
        self.assertIn("1 RX queues, not 2", r.stderr)
        with open(js) as f:
            stats = json.load(f)
        self.assertEqual({p["name"]: p["rx_queues"] for p in stats["ports"]},
                         {"Ethernet0": 2, "Ethernet256": 1})
        self.assertTrue(all(w["rx_packets"] > 0 for w in stats["workers"]), stats["workers"])
        self.assertTrue(stats["conservation"]["holds"], stats["conservation"])

    def test_flood_two_producers_balance(self):
        """Two workers flooding the same two VOQs (a pcap host port replaying one capture per
        queue forever, net_null uplinks, no back-off sleep) for 3 s: the counters balance
        exactly. This is the run that catches VOQ rings made single-producer with two
        producers (checked by hand: conservation VIOLATED, exit status 3), which the finite
        captures above are too short to hit."""
        d = tmpdir()
        h_rx = []
        for q in (0, 1):
            path = write_frames(os.path.join(d, f"flood-q{q}.pcap"), [
                flow_frame(f, s) for s in range(8) for f in range(FLOWS) if rss_queue(f, 2) == q])
            h_rx.append(f"rx_pcap={path}")
        cfg = os.path.join(d, "flood.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(mac=SWITCH_MAC, d=d, h_rx=",".join(h_rx) + ",infinite_rx=1",
                                  u_rx="")
                    .replace(f"net_pcap_u0,,tx_pcap={d}/out-u0.pcap", "net_null_u0,no-rx=1")
                    .replace(f"net_pcap_u1,,tx_pcap={d}/out-u1.pcap", "net_null_u1,no-rx=1"))
        with open(cfg) as f:
            self.assertEqual(f.read().count("net_null_u"), 2)
        js = os.path.join(d, "stats.json")
        r = subprocess.run(dataplane_cmd(f"rssf-{os.getpid()}", "--config", cfg, "--rxq", "2",
                                         "--idle-sleep-us", "0", "--duration", "3",
                                         "--stats-json", js, lcores=LCORES),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr)
        with open(js) as f:
            stats = json.load(f)
        c = stats["conservation"]
        self.assertTrue(c["holds"], c)
        self.assertEqual(c["received"], c["transmitted"] + c["dropped"] + c["queued"], c)
        self.assertTrue(all(w["rx_packets"] > 0 for w in stats["workers"]), stats["workers"])
        self.assertGreater(c["transmitted"], 0, c)


if __name__ == "__main__":
    unittest.main()
