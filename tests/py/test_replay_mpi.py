"""rocesw-replay-mpi (docs/replay-parallel.md): a zone replayed over MPI ranks on ns-3's
distributed simulator gives the outputs of the sequential replay byte for byte (captures,
summary.json, report.html, events.jsonl, the text) with 1 and 2 ranks, in both of ns-3's
synchronisation modes; a frame crossing ranks arrives at its exact time, t_send + wire + propagation
(the formula of docs/replay.md, not the code's output), never a lookahead late. Built and run only
with meson -Dns3_mpi (scripts/setup-ns3-mpi.sh)."""
import filecmp
import json
import math
import os
import re
import subprocess
import sys
import unittest

from scapy.utils import RawPcapReader

from common import BUILD, ROCESW, ROOT, tmpdir

MPI = os.path.join(BUILD, "rocesw-replay-mpi")
ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")
TWO_HOP = os.path.join(ROOT, "pcap-tests", "09-pfc-two-hop-spreading", "zone.yaml")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")


def read(path):
    r = RawPcapReader(path)
    try:
        return [(m.sec * 10**9 + m.usec, d) for d, m in r]
    finally:
        r.close()


def same_tree(test, a, b):
    cmp = filecmp.dircmp(a, b)
    test.assertEqual((cmp.left_only, cmp.right_only), ([], []))
    for f in cmp.common_files:
        test.assertTrue(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False), f)
    for sub in cmp.common_dirs:
        same_tree(test, os.path.join(a, sub), os.path.join(b, sub))


class ReplayMpi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.ring = os.path.join(cls.dir, "gen-ring")
        subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "8", "--message", "262144",
                        "--out", cls.ring], check=True, capture_output=True)
        cls.incast = os.path.join(cls.dir, "gen-incast")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--message", "262144", "--speed", "100000", "--out", cls.incast],
                       check=True, capture_output=True)

    def seq(self, name, config, indir, *extra):
        out = os.path.join(self.dir, name)
        r = subprocess.run([ROCESW, "replay", "--config", config, "--in-dir", indir, "--out", out,
                            *extra],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out, r.stdout.replace(out, "OUT")

    def mpi(self, name, ranks, sync, config, indir, *extra, check=True, env=None):
        out = os.path.join(self.dir, name)
        r = subprocess.run(["mpirun", "-np", str(ranks), MPI, "--sync", sync, "--config", config,
                            "--in-dir", indir, "--out", out,
                            *extra], capture_output=True, text=True,
                           env=dict(ENV, ROCESW_MPI_STATS="1", **(env or {})), timeout=600)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return out, r.stdout.replace(out, "OUT"), r

    def identical(self, tag, config, indir, runs):
        """The sequential run's outputs, and each run's ROCESW_MPI_STATS lines by (ranks, sync)."""
        s, s_txt = self.seq(f"{tag}-seq", config, indir)
        stats = {}
        for ranks, sync in runs:
            m, m_txt, r = self.mpi(f"{tag}-{ranks}-{sync}", ranks, sync, config, indir)
            stats[ranks, sync] = r.stderr
            with self.subTest(ranks=ranks, sync=sync):
                same_tree(self, s, m)
                self.assertEqual(s_txt, m_txt)
        return s, stats

    def test_zone_2stage_ring(self):
        s, _ = self.identical("ring", ZONE, self.ring, [(1, "window"), (2, "window"),
                                                        (2, "null-messages")])
        with open(os.path.join(s, "summary.json")) as f:
            self.assertTrue(json.load(f)["conservation"]["holds"])

    def test_payload_in_capture_crosses_ranks(self):
        """Frames whose payload stays in their host's capture (docs/replay.md, "Limits"; here
        every frame's, ROCESW_PAYLOAD_IN_CAPTURE=1) cross ranks whole: 2 ranks write the
        sequential run's outputs byte for byte."""
        s, s_txt = self.seq("payload-seq", ZONE, self.ring)
        m, m_txt, _ = self.mpi("payload-2-window", 2, "window", ZONE, self.ring,
                               env={"ROCESW_PAYLOAD_IN_CAPTURE": "1"})
        same_tree(self, s, m)
        self.assertEqual(s_txt, m_txt)

    RUNS = (("seq", [ROCESW, "replay"]),
            ("window", ["mpirun", "-np", "2", MPI, "--sync", "window"]),
            ("null", ["mpirun", "-np", "2", MPI, "--sync", "null-messages"]))

    def closed(self, tag, config, spec, *extra, runs=RUNS):
        """The sequential closed loop, then 2 ranks in both modes: the same outputs."""
        outs = []
        for name, cmd in runs:
            out = os.path.join(self.dir, f"{tag}-{name}")
            r = subprocess.run([*cmd, "--config", config, "--collective", spec, *extra, "--out",
                                out], capture_output=True, text=True, env=ENV, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            outs.append((out, r.stdout.replace(out, "OUT")))
        for out, txt in outs[1:]:
            with self.subTest(run=out):
                same_tree(self, outs[0][0], out)
                self.assertEqual(outs[0][1], txt)
        with open(os.path.join(outs[0][0], "summary.json")) as f:
            return json.load(f), outs[0][0]

    def test_closed_loop_ring(self):
        s, _ = self.closed("cring", ZONE, "ring,size=2M")
        self.assertTrue(s["collective"]["complete"])

    def test_closed_loop_ring_ctsw_failure(self):
        """ctsw1 (rank 0) fails mid-ring and its links go down on both ranks' ends; ECMP moves
        the flows to ctsw2 (rank 1); frames put on the failed links are lost and retransmitted."""
        out = {}
        for name, cmd in (("seq", [ROCESW, "replay"]),
                          ("window", ["mpirun", "-np", "2", MPI, "--sync", "window"]),
                          ("null", ["mpirun", "-np", "2", MPI, "--sync", "null-messages"])):
            out[name] = os.path.join(self.dir, f"cfail-{name}")
            r = subprocess.run([*cmd, "--config", ZONE, "--collective", "ring,size=4M,qps=4",
                                "--fail", "ctsw1@50us", "--recover", "ctsw1@150us", "--out",
                                out[name]], capture_output=True, text=True,
                               env=ENV, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("window", "null"):
            with self.subTest(sync=name):
                same_tree(self, out["seq"], out[name])
        with open(os.path.join(out["seq"], "events.jsonl")) as f:
            kinds = [json.loads(line)["event"] for line in f]
        self.assertEqual(kinds.count("link_down"), 4)
        with open(os.path.join(out["seq"], "summary.json")) as f:
            self.assertTrue(json.load(f)["collective"]["complete"])

    def test_null_messages_keep_their_promise(self):
        """With each message ns-3's null messages promise the other rank nothing from this one
        before min(this rank's next event, its safe time) + lookahead, and that rank runs up to
        the promise. At the ring's start, rank 0's first step (99 ns) sends frames to rank 1
        (ctsw2) to be received at 382 ns; its next event on ns-3's agenda was its null message at
        201 ns, so the first frame promised nothing before 201 + 201 = 402 ns, and the next one,
        received earlier, could be taken after rank 1 ran past its time: the outputs then
        depended on timing. The MPI replay
        refuses a frame that undercuts a promise (at MPI's profiling interface), so this fails
        on every run if a step's frames can undercut it, and gives the sequential outputs."""
        out = {}
        for name, cmd in (("seq", [ROCESW, "replay"]),
                          ("null", ["mpirun", "-np", "2", MPI, "--sync", "null-messages"])):
            out[name] = os.path.join(self.dir, f"promise-{name}")
            r = subprocess.run([*cmd, "--config", ZONE, "--collective", "ring,size=4M,qps=4",
                                "--until", "2000", "--out", out[name]],
                               capture_output=True, text=True, env=ENV, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("promising", r.stderr)
        same_tree(self, out["seq"], out["null"])

    def test_closed_loop_incast_pfc(self):
        """h0 and h1 (sw1, rank 0) send to h2 (sw2, rank 1): PFC frames, drops and go-back-N
        retransmissions cross ranks."""
        s, out = self.closed("cpfc", TWO_HOP, "incast,root=2,size=1M")
        self.assertTrue(s["collective"]["complete"])
        with open(os.path.join(out, "events.jsonl")) as f:
            kinds = [json.loads(line)["event"] for line in f]
        self.assertGreater(kinds.count("pfc_rx"), 0)

    def test_closed_loop_incast_cts(self):
        s, _ = self.closed("ccts", ZONE, "incast,size=2M,root=0,cts=4")
        c = s["collective"]
        self.assertTrue(c["complete"])
        self.assertGreater(sum(q["cts_rx"] for q in c["qps"]), 0)

    def test_until_cuts_alike(self):
        """--until stops every rank at the same virtual time: what is queued and in flight then,
        counted on the rank that holds it, sums to the sequential run's."""
        s, s_txt = self.seq("until-seq", ZONE, self.ring, "--until", "20000")
        self.assertIn("stopped by --until", s_txt)
        for sync in ("window", "null-messages"):
            m, m_txt, _ = self.mpi(f"until-{sync}", 2, sync, ZONE, self.ring, "--until", "20000")
            with self.subTest(sync=sync):
                same_tree(self, s, m)
                self.assertEqual(s_txt, m_txt)

    def test_rocesw_replay_ranks(self):
        """`rocesw replay --ranks 2 --sync null-messages` runs mpirun itself."""
        s, s_txt = self.seq("ranks-seq", ZONE, self.ring)
        out = os.path.join(self.dir, "ranks-2")
        r = subprocess.run([ROCESW, "replay", "--ranks", "2", "--sync", "null-messages",
                            "--config", ZONE, "--in-dir", self.ring, "--out", out],
                           capture_output=True, text=True, env=ENV, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        same_tree(self, s, out)
        self.assertEqual(s_txt, r.stdout.replace(out, "OUT"))
        r = subprocess.run([ROCESW, "replay", "--ranks", "two", "--config", ZONE, "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--ranks expects a number of MPI ranks", r.stderr)

    def test_pfc_incast_events(self):
        """sw1 (h0, h1) and sw2 (h2) are two racks, so two ranks: every PFC frame crosses."""
        s, _ = self.identical("incast", TWO_HOP, self.incast,
                              [(2, "window"), (2, "null-messages")])
        with open(os.path.join(s, "events.jsonl")) as f:
            kinds = [json.loads(line)["event"] for line in f]
        self.assertGreater(kinds.count("pfc_rx"), 0)

    def test_generated_48_switch_zone(self):
        z = os.path.join(self.dir, "z48")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_zone.py"), "--racks",
                        "32", "--hosts", "16", "--ctsws", "16", "--out", z], check=True,
                       capture_output=True)
        gen = os.path.join(self.dir, "gen-ring64")
        subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "64", "--message",
                        "131072", "--out", gen], check=True, capture_output=True)
        _, stats = self.identical("z48", os.path.join(z, "zone.yaml"), gen,
                                  [(2, "window"), (2, "null-messages")])
        # batches too large for one message of ns-3's (16 KiB) left in several, and the
        # outputs above are still the sequential run's
        for run, err in stats.items():
            with self.subTest(run=run):
                split = [int(n) for n in re.findall(r"\((\d+) batches sent in several\)", err)]
                self.assertEqual(len(split), 2, err)
                self.assertGreater(sum(split), 0)

    def test_frame_crossing_ranks_arrives_on_time(self):
        """With 2 ranks, racks rtsw1-2 and ctsw1 are on rank 0, rtsw3-4 and ctsw2 on rank 1. The
        first frame rtsw1 sends to ctsw2 finds ctsw2's egress idle (only rack 1 sends to rack 2),
        so it leaves ctsw2 when it is whole there: its departure from rtsw1, plus its wire time,
        (len + 12) x 8 bits at 400G, plus 40 m x 5 ns/m. A frame delivered one lookahead late
        (200 ns) would leave 200 ns later."""
        m, _, _ = self.mpi("ontime", 2, "window", ZONE, self.ring)
        ups = read(os.path.join(m, "rtsw1", "Ethernet264.pcap"))
        t0, f0 = ups[0]
        ser = math.ceil((len(f0) + 12) * 8 / 400)
        # the same frame after ctsw2 (MACs, TTL and checksum rewritten): its addresses and BTH
        seen = [t for t, raw in read(os.path.join(m, "ctsw2", "Ethernet8.pcap"))
                if raw[26:34] == f0[26:34] and raw[42:54] == f0[42:54]]
        self.assertTrue(seen)
        self.assertEqual(seen[0], t0 + ser + 200)

    def test_frames_crossing_ranks_batched(self):
        """Frames for another rank travel in batches, one message for several frames, and every
        one arrives: each rank sends as many frames as the sequential run's summary counts on
        the link directions from its entities to the other rank's (rtsw1-2, ctsw1 and their
        hosts on rank 0; rtsw3-4, ctsw2 on rank 1: racks in blocks, CTSWs round-robin), and
        the other rank receives them all."""
        s, _ = self.seq("batch-seq", ZONE, self.ring)
        rank = {"rtsw1": 0, "rtsw2": 0, "ctsw1": 0, "rtsw3": 1, "rtsw4": 1, "ctsw2": 1}
        with open(os.path.join(s, "summary.json")) as f:
            links = json.load(f)["links"]
        for lk in links:  # a host is on its rack's rank
            for me, other in ((lk["a"], lk["b"]), (lk["b"], lk["a"])):
                if "|" not in me:
                    rank[me] = rank[other.split("|")[0]]
        crossing = [0, 0]
        for lk in links:
            for d in lk["directions"]:
                src, dst = (rank[e.split("|")[0]] for e in (d["from"], d["to"]))
                if src != dst:
                    crossing[src] += d["frames"]
        self.assertGreater(min(crossing), 0)
        for sync in ("window", "null-messages"):
            m, _, r = self.mpi(f"batch-{sync}", 2, sync, ZONE, self.ring)
            with self.subTest(sync=sync):
                same_tree(self, s, m)
                stats = {int(g[0]): [int(x) for x in g[1:]] for g in re.findall(
                    r"rank (\d+): .*frames sent (\d+) received (\d+) in messages sent (\d+) "
                    r"received (\d+)", r.stderr)}
                self.assertEqual(sorted(stats), [0, 1], r.stderr)
                for me in (0, 1):
                    sent, received, msgs_sent, msgs_received = stats[me]
                    self.assertEqual(sent, crossing[me])
                    self.assertEqual(received, crossing[1 - me])
                    self.assertEqual(msgs_sent, stats[1 - me][3])
                    self.assertLess(msgs_sent, sent)

    def test_unread_payload_stays_home(self):
        """With no capture nor trace, a frame crossing ranks carries only what a switch or host
        can read of it (docs/replay.md, "Limits"): its first 14 + 20 + 255 + 8 bytes, the
        farthest a UDF reaches past an IPv4 L4 header; its record adds 17 bytes and a 44-byte
        flow key. So does it with the collective's captures, which keep each frame's first 128
        bytes by default; with whole-frame captures (--capture-snaplen 0) the records carry
        whole frames. The outputs are the sequential run's in every case."""
        runs = {}
        for caps, extra in (("all", []), ("whole", ["--capture-snaplen", "0"]),
                            ("none", ["--captures", "none"])):
            seq = os.path.join(self.dir, f"unread-{caps}-seq")
            args = ["--config", ZONE, "--collective", "ring,size=2M", *extra]
            r = subprocess.run([ROCESW, "replay", *args, "--out", seq], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            out = os.path.join(self.dir, f"unread-{caps}-2")
            m = subprocess.run(["mpirun", "-np", "2", MPI, "--sync", "window", *args, "--out",
                                out], capture_output=True, text=True,
                               env=dict(ENV, ROCESW_MPI_STATS="1"), timeout=600)
            self.assertEqual(m.returncode, 0, m.stderr)
            with self.subTest(captures=caps):
                same_tree(self, seq, out)
            per = [float(x) for x in re.findall(r"frame records sent \d+ bytes \(([\d.]+) a",
                                                  m.stderr)]
            self.assertEqual(len(per), 2, m.stderr)
            runs[caps] = per
        reach = 14 + 20 + 255 + 8
        for per in runs["none"] + runs["all"]:
            self.assertLessEqual(per, 17 + 44 + reach)
        for per in runs["whole"]:  # 2 MiB of 4 KiB frames and their ACKs
            self.assertGreater(per, 1000)

    def test_pfc_crossing_ranks_arrives_on_time(self):
        """Every PFC frame sw2 sends to sw1 (another rank) is received at its departure plus
        its wire time (60 + 12 bytes at the link's speed) plus the link's propagation."""
        m, _, _ = self.mpi("pfctime", 2, "null-messages", TWO_HOP, self.incast)
        with open(os.path.join(m, "summary.json")) as f:
            s = json.load(f)
        link = next(lk for lk in s["links"] if {lk["a"], lk["b"]} == {"sw1|Ethernet16",
                                                                      "sw2|Ethernet0"})
        wire = math.ceil((60 + 12) * 8 * 1000 / link["speed"])
        with open(os.path.join(m, "events.jsonl")) as f:
            ev = [json.loads(line) for line in f]
        tx = sorted(e["t"] for e in ev if e["event"] == "pfc_tx" and e.get("switch") == "sw2"
                    and e.get("port") == "Ethernet0")
        rx = sorted(e["t"] for e in ev if e["event"] == "pfc_rx" and e.get("switch") == "sw1"
                    and e.get("port") == "Ethernet16")
        self.assertGreater(len(tx), 0)
        self.assertEqual(rx, [t + wire + link["delay_ns"] for t in tx][:len(rx)])

    def test_samples_of_both_ranks(self):
        """The incast's queue-depth samples (every non-empty queue at the start of each 1 µs
        period, docs/replay.md) come from both ranks' switches, as the sequential run writes
        them: also when the run is cut while sw1's rank has had its last wake-up (its hosts
        paused by PFC) and sw2's rank still runs, so that only the zone's last wake-up says
        which period starts sw1's held queue is sampled at."""
        for until in ("6000", "20000", None):
            extra = ["--until", until] if until else []
            s, s_txt = self.seq(f"samples-seq-{until}", TWO_HOP, self.incast, *extra)
            for sync in ("window", "null-messages"):
                m, m_txt, _ = self.mpi(f"samples-{sync}-{until}", 2, sync, TWO_HOP,
                                       self.incast, *extra)
                with self.subTest(until=until, sync=sync):
                    same_tree(self, s, m)
                    self.assertEqual(s_txt, m_txt)
            with open(os.path.join(s, "events.jsonl")) as f:
                samples = [e for e in map(json.loads, f) if e["event"] == "queue_depth"]
            self.assertEqual({e["switch"] for e in samples}, {"sw1", "sw2"})
            self.assertTrue(all(e["t"] % 1000 == 0 for e in samples))

    def test_deadlock_across_ranks(self):
        """A PFC deadlock whose cycle spans ranks (docs/replay-parallel.md, "PFC deadlocks"):
        the bounce zone of test_deadlock closes ctsw1 -> rtsw3 -> ctsw2 -> rtsw4, and with 2
        ranks the CTSWs are dealt to ranks in turn, ctsw1 to rank 0 and ctsw2 to rank 1. 2
        ranks in both modes and 3 ranks find it, report it after the hold time and, with the
        watchdog, its end, as the sequential run does byte for byte; cut before the hold time
        has passed, none reports it."""
        zones = os.path.join(ROOT, "config", "zone-deadlock")
        spec = "alltoall,size=64M,qps=4,ranks=h0:h1:h2:h3:h4:h5:h6:h7"
        runs = self.RUNS + (("3-window", ["mpirun", "-np", "3", MPI, "--sync", "window"]),)
        for variant, until, found in (("bounce", "3000000", True), ("pfcwd", "2500000", True),
                                      ("bounce", "1000000", False)):
            s, _ = self.closed(f"dl-{variant}-{until}", os.path.join(zones, variant, "zone.yaml"),
                               spec, "--captures", "none", "--fail", "ctsw1|Ethernet0@0",
                               "--fail", "ctsw2|Ethernet8@0", "--until", until, runs=runs)
            dls = s["deadlocks"]
            if not found:
                self.assertEqual(dls, [])
                continue
            self.assertEqual(len(dls), 1)
            cycle = {m["switch"] for m in dls[0]["cycle"]}
            self.assertTrue({"ctsw1", "ctsw2"} <= cycle, cycle)
            self.assertEqual(dls[0]["broken_ns"] is not None, variant == "pfcwd")

if __name__ == "__main__":
    unittest.main(verbosity=2)
