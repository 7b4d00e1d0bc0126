"""The same frames through every front end of the pipeline, live included, give the same verdict
per frame (issue: the pipeline as one program):
- `rocesw inspect --config` (the tables, no traffic manager);
- `rocesw replay --trace FILTER` (tables and traffic manager on virtual time; each arrival the
  BPF filter matches traced into trace.jsonl);
- the live dataplane with `trace add N` / `show trace` (af_packet ports on veths; the worker
  traces each frame through the pipeline, frame by frame);
- the live dataplane's ordinary path (the burst pipeline, not traced): its drop counters by
  reason and its uplinks' transmit counters.
Each frame's expected verdict is written down by hand (tests/py/test_pipeline_verdicts.py, from
docs/architecture.md's ingress steps); the front ends are checked against it and, for the ECMP
member a flow takes, against each other. The trace control ops refuse hostile input with a
specific error."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from scapy.layers.l2 import Ether  # noqa: E402

from common import ROCESW, dataplane_cmd, inspect, require_root, tmpdir, write_pcap  # noqa: E402
from labnet import (HOST_MAC, UPLINK_MACS, Control, Lab, four_uplink_config,  # noqa: E402
                    wait_drained, wait_for_line, wait_until)
from test_pipeline_verdicts import frames  # noqa: E402

PREFIX = "rswpv"
UPLINKS = {"Ethernet8", "Ethernet16", "Ethernet24", "Ethernet32"}
# every test frame: the host's source MAC, or its multicast twin (the smac_multicast case)
FILTER = "ether src 02:00:00:00:10:01 or ether src 03:00:00:00:10:01"


def trace_verdict(entry):
    """A traced frame's verdict as inspect names it: the uplink it was queued for, the drop
    reason, or MAC control."""
    if entry["verdict"] == "enqueued":
        tm = [line for line in entry["trace"] if line.startswith("tm: enqueue on ")]
        return tm[-1].split()[3]
    return entry["verdict"]


def expected(want, raw):
    """The hand-written expectation in a trace's terms: MAC control frames are one verdict."""
    if want in ("pfc_consumed", "pause_consumed"):
        return "mac_control"
    return want


class LivePipelineVerdicts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        cls.cfg = os.path.join(cls.dir, "switch.yaml")
        with open(cls.cfg, "w") as f:
            f.write(four_uplink_config("rswv", "live-verdicts", "",
                                       "buckets: 1024, resilient: true"))
        cls.frames = frames()
        cls.pcap = os.path.join(cls.dir, "in.pcap")
        pkts = []
        for i, (raw, _) in enumerate(cls.frames):
            pkts.append(Ether(raw))
            pkts[-1].time = i * 10e-6
        write_pcap(cls.pcap, pkts)
        cls.sock = os.path.join(cls.dir, "dp.sock")
        cls.lab = Lab("rswv")
        try:
            cls.h0 = cls.lab.host("h0", "rswv-h0", HOST_MAC)
            for i in range(4):
                cls.lab.host(f"u{i}", f"rswv-u{i}", UPLINK_MACS[i])
            cls.dp = cls.lab.start(dataplane_cmd(PREFIX, "--config", cls.cfg,
                                                 "--control-socket", cls.sock),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_for_line(cls.dp.stderr, "forwarding")
        except BaseException:
            cls.lab.close()
            raise
        cls.ctl = Control(cls.sock)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def op(self, req):
        return self.ctl.request(dict(v=1, **req))

    def send_all(self):
        """Every test frame out of h0, in order; returns once the switch accounted for all."""
        before = self.ctl.counters()["conservation"]["received"]
        s = self.lab.socket(self.h0)
        for raw, _ in self.frames:
            s.send(raw)
        s.close()
        return wait_drained(self.ctl, before + len(self.frames))

    def live_trace(self):
        """Per test frame, its traced verdict (frames the kernel of h0 sent meanwhile, such as
        IPv6 router solicitations, are told apart by their bytes)."""
        r = self.op({"op": "trace_add", "count": 64})
        self.assertTrue(r["ok"], r)
        self.send_all()
        shown = self.op({"op": "trace_show"})
        self.assertTrue(shown["ok"], shown)
        entries = [p for w in shown["result"]["workers"] for p in w["packets"]]
        got = []
        for raw, _ in self.frames:
            head = raw[:64].hex()
            match = [e for e in entries if e["data"] == head and e["len"] == len(raw)]
            self.assertTrue(match, f"frame {raw[:64].hex()} traced")
            got.append(trace_verdict(match[0]))
            entries.remove(match[0])
        r = self.op({"op": "trace_clear"})
        self.assertTrue(r["ok"], r)
        shown = self.op({"op": "trace_show"})
        self.assertEqual([p for w in shown["result"]["workers"] for p in w["packets"]], [])
        return got

    def replay_trace(self):
        out = os.path.join(self.dir, "replay")
        r = subprocess.run([ROCESW, "replay", "--config", self.cfg, "--in",
                            "Ethernet0=" + self.pcap, "--out", out, "--trace", FILTER],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"trace: {len(self.frames)} arrivals matched", r.stdout)
        with open(os.path.join(out, "trace.jsonl")) as f:
            entries = [json.loads(line) for line in f]
        self.assertEqual([e["port"] for e in entries], ["Ethernet0"] * len(self.frames))
        return [trace_verdict(e) for e in entries]

    def test_1_every_front_end_agrees(self):
        got_inspect = [r["drop"] or r["egress_port"] for r in inspect(self.pcap, "--config",
                                                                      self.cfg)]
        got_replay = self.replay_trace()
        got_live = self.live_trace()
        for i, (raw, want) in enumerate(self.frames):
            with self.subTest(frame=i + 1, want=want):
                if want == "uplink":
                    self.assertIn(got_inspect[i], UPLINKS)
                    self.assertEqual(got_replay[i], got_inspect[i], "replay's member")
                    self.assertEqual(got_live[i], got_inspect[i], "the live member")
                else:
                    self.assertEqual(got_inspect[i], want)
                    self.assertEqual(got_replay[i], expected(want, raw))
                    self.assertEqual(got_live[i], expected(want, raw))
        self.assertGreater(len(set(got_inspect[:8])), 1, "the hash spreads the flows")
        # the ordinary (burst) path: the same drops by reason and the same uplinks
        before = self.ctl.counters()
        after = self.send_all()
        drops = {k: after["drops"].get(k, 0) - before["drops"].get(k, 0)
                 for k in after["drops"]}
        want_drops = {}
        for raw, want in self.frames:
            if want not in ("uplink", "pfc_consumed", "pause_consumed"):
                want_drops[want] = want_drops.get(want, 0) + 1
        self.assertEqual({k: v for k, v in drops.items() if v}, want_drops)
        tx = {p["name"]: p["tx_packets"] for p in after["ports"]}
        tx0 = {p["name"]: p["tx_packets"] for p in before["ports"]}
        want_tx = {}
        for i, (raw, want) in enumerate(self.frames):
            if want == "uplink":
                want_tx[got_inspect[i]] = want_tx.get(got_inspect[i], 0) + 1
        self.assertEqual({p: tx[p] - tx0[p] for p in UPLINKS if tx[p] - tx0[p]}, want_tx)

    def test_2_trace_ops_refuse_garbage(self):
        bad = [{}, {"count": 0}, {"count": 257}, {"count": -1}, {"count": "10"},
               {"count": 1.5}, {"count": True}, {"count": None}, {"count": 1 << 40}]
        for extra in bad:
            with self.subTest(request=extra):
                r = self.op(dict(op="trace_add", **extra))
                self.assertFalse(r["ok"])
                self.assertEqual(r["error"], 'trace_add: expected {"count": N}, N from 1 to '
                                 '256 (frames each worker traces)')
        shown = self.op({"op": "trace_show"})["result"]
        self.assertEqual(shown["max"], 256)
        self.assertEqual({w["left"] for w in shown["workers"]}, {0}, "nothing started")
        # the CLI says the same before asking
        r = subprocess.run([ROCESW, "trace", "add", "1000", "--socket", self.sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("N must be 1-256", r.stderr)

    def test_3_bounded_buffer_and_cli(self):
        """add N twice adds up as far as the buffer holds (256 a worker); show over the CLI."""
        for n in (200, 200):
            r = subprocess.run([ROCESW, "trace", "add", str(n), "--socket", self.sock],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
        shown = self.op({"op": "trace_show"})["result"]
        self.assertEqual({w["left"] for w in shown["workers"]}, {256})
        self.send_all()
        r = subprocess.run([ROCESW, "show", "trace", "--socket", self.sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Packet 1 (worker 0): Ethernet0", r.stdout)
        self.assertIn("  drop: ttl_expired (ingress)", r.stdout)
        wait_until(lambda: subprocess.run([ROCESW, "clear", "trace", "--socket", self.sock],
                                          capture_output=True).returncode == 0, "clear trace")
        shown = self.op({"op": "trace_show"})["result"]
        self.assertEqual({w["left"] for w in shown["workers"]}, {0})


if __name__ == "__main__":
    unittest.main()
