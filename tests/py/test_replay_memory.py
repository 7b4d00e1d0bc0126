"""Replay's packet memory grows with what the buffers hold (issue 17): DPDK starts with what the
route tables and the first packet pools need (256 MiB and the tables, control/replay_memory.c),
and pools beyond it are made in memory added as the buffers fill (dataplane/replay/replay_mem.c).

A switch with 1 GiB lossy pools (default lossy profiles, dynamic_th 3: alpha 8) under a
2 x 400G -> 100G incast of 4 KiB frames (160 MiB from each sender, DSCP 0, lossy): the queue
grows by 800 - 100 Gb/s for as long as both send, to 7/8 of 320 MiB = 280 MiB (294 MB) at the
end, below alpha/(1 + alpha) of the pool (954 MB), so nothing may be dropped; its frames take more
packet memory than DPDK was started with, so before the growth they were no_mbuf drops.
"""
import json
import os
import re
import subprocess
import sys
import unittest

from common import ROCESW, ROOT, tmpdir

ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")

SWITCH = """
DEVICE_METADATA:
  localhost: {hostname: deep, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 400000, role: downlink}
  Ethernet8: {speed: 400000, role: downlink}
  Ethernet16: {speed: 100000, role: downlink}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
BUFFER_POOL:
  ingress_lossless_pool: {size: 1073741824, type: ingress, mode: dynamic}
  egress_lossy_pool: {size: 1073741824, type: egress, mode: dynamic}
  egress_lossless_pool: {size: 1073741824, type: egress, mode: static}
"""
MESSAGE = 160 << 20


class Memory(unittest.TestCase):
    def test_queue_past_dpdk_start_memory_without_drop(self):
        d = tmpdir()
        gen = os.path.join(d, "gen")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--dscp", "0", "--mtu", "4096", "--message", str(MESSAGE), "--out", gen],
                       check=True, capture_output=True)
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(SWITCH)
        out = os.path.join(d, "out")
        r = subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out, "--captures", "none",
                            "--sample-ns", "0", "--in", f"Ethernet0={gen}/h0.pcap",
                            "--in", f"Ethernet8={gen}/h1.pcap"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertEqual(s["drops"], {}, "nothing dropped, no no_mbuf")
        self.assertTrue(s["conservation"]["holds"])
        q = [p for p in s["ports"] if p["name"] == "Ethernet16"][0]["queues"]
        depth = max(x["max_depth_bytes"] for x in q)
        # 7/8 of the 2 x 160 MiB of frames (payload plus headers) are queued when both finish
        self.assertGreater(depth, 7 / 8 * 2 * MESSAGE * 0.95)
        self.assertGreater(depth, 256 << 20, "more than DPDK's start memory")
        sent = sum(p["tx_packets"] for p in s["ports"] if p["name"] == "Ethernet16")
        got = sum(p["rx_packets"] for p in s["ports"])
        self.assertEqual(sent, got)



class FlowCacheGrowth(unittest.TestCase):
    """A replay run keeps one flow cache of ingress decisions for all its switches
    (dataplane/tables/flow_cache.h), from 8,192 slots, doubling while more than one lookup in 16
    evicts another flow's decision. A ring over 256 hosts of a generated 36-switch zone has some
    1,500 (switch, flow) pairs (each transfer crosses three switches, its ACKs three more): in
    8,192 direct-mapped slots about one in five shares a slot and evicts on every frame, so the
    cache must grow; and whatever it holds, every output is the one the tables give without it
    (ROCESW_FLOW_CACHE=off)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        cls.zone = os.path.join(cls.dir, "zone")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_zone.py"), "--racks",
                        "32", "--hosts", "8", "--ctsws", "4", "--out", cls.zone], check=True,
                       capture_output=True)

    def run_ring(self, cache):
        out = os.path.join(tmpdir(), "o")
        env = dict(os.environ, ROCESW_REPLAY_STATS="1")
        if cache == "off":
            env["ROCESW_FLOW_CACHE"] = "off"
        p = subprocess.run([ROCESW, "replay", "--config", os.path.join(self.zone, "zone.yaml"),
                            "--collective", "ring,size=16K,ranks=256", "--captures", "none",
                            "--quiet", "--out", out], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = {}
        for n in sorted(os.listdir(out)):
            with open(os.path.join(out, n), "rb") as f:
                files[n] = f.read()
        return p.stderr, files

    def test_grows_and_changes_nothing(self):
        err, on = self.run_ring("on")
        m = re.search(r"^replay: flow cache (\d+) slots \(doubled (\d+) times\), (\d+) hits, "
                      r"(\d+) misses, (\d+) evictions, (\d+) not kept$", err, re.M)
        self.assertIsNotNone(m, err)
        slots, doubled, hits, misses = (int(m[i]) for i in range(1, 5))
        self.assertGreaterEqual(doubled, 1)
        self.assertEqual(slots, 8192 << doubled)
        summary = json.loads(on["summary.json"])
        self.assertTrue(summary["collective"]["complete"])
        # every data frame a switch received was looked up once (no PFC, no drop here)
        hops = sum(p["rx_packets"] for sw in summary["switches"] for p in sw["ports"])
        self.assertEqual(hits + misses, hops)
        err_off, off = self.run_ring("off")
        self.assertNotIn("flow cache", err_off)
        self.assertEqual(sorted(on), sorted(off))
        for name in on:
            self.assertEqual(on[name], off[name], name)



def thp_mode():
    """The kernel's transparent huge page mode: always, madvise or never."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return "never"


def mappings(smaps):
    """/proc/PID/smaps as mappings: path ("" for anonymous memory), size, VmFlags (proc(5))."""
    out = []
    for m in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps):
        head = m.split("\n", 1)[0].split()
        lo, hi = (int(x, 16) for x in head[0].split("-"))
        flags = m.split("VmFlags:", 1)[1].split("\n", 1)[0].split()
        out.append({"path": " ".join(head[5:]), "size": hi - lo, "flags": flags})
    return out


class HugeHeap(unittest.TestCase):
    """`rocesw replay` runs itself again with glibc's malloc on transparent huge pages
    (control/cli/huge_heap.c, docs/performance.md), unless THP is off or the user says how
    malloc uses them; the run's outputs do not depend on it."""

    def run_held(self, extra_env):
        """A replay held at its capture's open, a FIFO: its heap's mapping flags, read then, and
        its outputs. open() of a FIFO for writing returns once the reader has it open, so by
        then the process runs the command (running itself again, its first act, is behind it)."""
        d = tmpdir()
        fifo = os.path.join(d, "in.pcap")
        os.mkfifo(fifo)
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--message", "65536", "--out", os.path.join(d, "gen")],
                       check=True, capture_output=True)
        with open(os.path.join(d, "gen", "h0.pcap"), "rb") as f:
            data = f.read()
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(SWITCH)
        p = subprocess.Popen([ROCESW, "replay", "--config", cfg, "--out", os.path.join(d, "o"),
                              "--sample-ns", "0", "--in", f"Ethernet0={fifo}"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=dict(os.environ, **extra_env))
        with open(fifo, "wb") as w:
            with open(f"/proc/{p.pid}/smaps") as f:
                smaps = f.read()
            with open(f"/proc/{p.pid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            w.write(data)
        _, err = p.communicate()
        self.assertEqual(p.returncode, 0, err)
        # the flags of the [heap] mapping: "hg" is MADV_HUGEPAGE (proc(5)); None under
        # AddressSanitizer, whose malloc is its own (no [heap], glibc's tunable moot)
        heaps = [m for m in mappings(smaps) if m["path"] == "[heap]"]
        if not heaps:
            self.assertIn("libasan", smaps, "no [heap] but glibc's malloc")
        heap_hg = "hg" in heaps[0]["flags"] if heaps else None
        # packet memory, made before the inputs are opened: its first pool holds 8,192 buffers
        # of 512-byte data rooms at least (docs/replay.md), in an anonymous mapping of its own
        pools = [m for m in mappings(smaps)
                 if m["path"] == "" and "hg" in m["flags"] and m["size"] >= 8192 * 512]
        with open(os.path.join(d, "o", "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(d, "o", "Ethernet16.pcap"), "rb") as f:
            capture = f.read()
        return heap_hg, comm, environ, summary, capture, len(pools) > 0

    def test_replay_heap_on_huge_pages_with_the_same_outputs(self):
        on_hg, on_comm, _, on_sum, on_cap, on_pool = self.run_held({})
        off_hg, off_comm, _, off_sum, off_cap, off_pool = self.run_held({"ROCESW_HUGE_HEAP": "0"})
        self.assertIn(on_hg, (thp_mode() != "never", None))
        self.assertIn(off_hg, (False, None))
        self.assertEqual(on_pool, thp_mode() != "never", "packet memory follows the heap")
        self.assertFalse(off_pool)
        self.assertEqual((on_comm, off_comm), ("rocesw", "rocesw"), "named as started, not 'exe'")
        self.assertTrue(on_sum["conservation"]["holds"])
        out = [p for p in on_sum["ports"] if p["name"] == "Ethernet16"][0]
        self.assertGreater(out["tx_packets"], 0)
        self.assertEqual(on_sum, off_sum)
        self.assertEqual(on_cap, off_cap)

    def test_tunables_the_user_set_are_kept(self):
        hg, _, environ, _, _, pool = self.run_held(
            {"GLIBC_TUNABLES": "glibc.malloc.arena_max=1"})
        self.assertIn(hg, (thp_mode() != "never", None))
        self.assertEqual(pool, thp_mode() != "never")
        self.assertTrue(any(e.startswith(b"GLIBC_TUNABLES=glibc.malloc.arena_max=1")
                            for e in environ))
        hg, _, _, _, _, pool = self.run_held({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"})
        self.assertIn(hg, (False, None), "the user's choice of huge pages stands")
        self.assertFalse(pool, "for packet memory too")


class SetupCpu(unittest.TestCase):
    """ROCESW_REPLAY_STATS=1 says on stderr how much CPU time the run had spent when its first
    event ran (docs/replay.md): more than nothing (loading the zone takes some), no more than the
    kernel's count of the whole process (wait4's rusage, user + system, which the re-exec onto
    huge pages keeps), and only when asked."""

    def run_zone(self, env, out=None):
        out = out or os.path.join(tmpdir(), "o")
        p = subprocess.Popen([ROCESW, "replay", "--config", ZONE, "--collective", "ring,size=1M",
                              "--captures", "none", "--quiet", "--out", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        err = p.stderr.read().decode()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        self.assertEqual(p.returncode, 0, err)
        return err, ru.ru_utime + ru.ru_stime

    def test_setup_cpu_within_the_process_cpu(self):
        err, total = self.run_zone(dict(os.environ, ROCESW_REPLAY_STATS="1"))
        got = [float(x) for x in re.findall(r"^replay: set-up ([\d.]+) s of CPU", err, re.M)]
        self.assertEqual(len(got), 1, err)
        self.assertGreater(got[0], 0)
        self.assertLessEqual(got[0], total + 0.001)  # rusage counts in microseconds
        err, _ = self.run_zone({k: v for k, v in os.environ.items()
                                if k != "ROCESW_REPLAY_STATS"})
        self.assertNotIn("set-up", err)

    def test_event_loop_end(self):
        """It also says the CPU time when the event loop ended, before any output was written:
        no earlier than set-up, no later than the whole process, and with at least as many
        wake-ups as the summary counts frames received by switch ports (each one's own)."""
        out = os.path.join(tmpdir(), "o")
        err, total = self.run_zone(dict(os.environ, ROCESW_REPLAY_STATS="1"), out)
        setup = float(re.search(r"^replay: set-up ([\d.]+) s of CPU", err, re.M)[1])
        ends = re.findall(r"^replay: event loop ends at ([\d.]+) s of CPU, (\d+) events$", err,
                          re.M)
        self.assertEqual(len(ends), 1, err)
        end, events = float(ends[0][0]), int(ends[0][1])
        self.assertGreaterEqual(end, setup)
        self.assertLessEqual(end, total + 0.001)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        hops = sum(p["rx_packets"] for sw in s["switches"] for p in sw["ports"])
        self.assertGreater(hops, 1000)
        self.assertGreaterEqual(events, hops)


class HeldRounds(unittest.TestCase):
    """A collective's transfers are made round by round as its connections reach them and let
    go once arrived (dataplane/replay/replay_coll.c): a ring AllReduce over N ranks has 2(N-1)
    rounds a loop of chunks, and its ranks keep within a few rounds of each other, so what the
    run holds follows the ranks, not the message. Over the 8 hosts of zone-2stage, 16 KiB
    chunks: 8 MiB is 64 loops of 14 steps (896 rounds), 32 MiB four times that; what is held
    must not grow with it, and stays within two loops' steps (a connection starts the next
    loop's first step as soon as it posted the last of this one)."""

    def held(self, size):
        out = os.path.join(tmpdir(), "o")
        p = subprocess.run([ROCESW, "replay", "--config", ZONE, "--collective",
                            f"ring,size={size},chunk=16K", "--captures", "none", "--quiet",
                            "--out", out], capture_output=True, text=True,
                           env=dict(os.environ, ROCESW_REPLAY_STATS="1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"^replay: collective: at most (\d+) of (\d+) rounds held "
                      r"\((\d+) transfers a round\)", p.stderr, re.M)
        self.assertIsNotNone(m, p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            coll = json.load(f)["collective"]
        self.assertTrue(coll["complete"], coll)
        return int(m[1]), int(m[2]), int(m[3])

    def test_held_rounds_do_not_grow_with_the_message(self):
        steps = 2 * (8 - 1)
        small, rounds_small, per = self.held("8M")
        large, rounds_large, _ = self.held("32M")
        self.assertEqual(per, 8)  # one connection a rank
        self.assertEqual(rounds_small, (8 << 20) // 8 // (16 << 10) * steps)
        self.assertEqual(rounds_large, 4 * rounds_small)
        self.assertLessEqual(small, 2 * steps)
        self.assertLessEqual(large, small + 2)


class ReadAhead(unittest.TestCase):
    """Replay asks for the next wake-ups' records ahead (dataplane/replay/replay_engine.c) when
    the zone's ports' TM records are more than the core's L2 holds (off on zone-2stage: 24
    ports), and ROCESW_READ_AHEAD=on|off decides instead. It only reads: every output is the
    same either way (captures of every port, summary, event log), here for a ring on several
    QPs that loses a frame and recovers, through a CTSW that fails and comes back."""

    def run_zone(self, mode):
        out = os.path.join(tmpdir(), "o")
        p = subprocess.run([ROCESW, "replay", "--config", ZONE, "--collective",
                            "ring,size=1M,qps=4,split=rr,drop=h1@7", "--fail", "ctsw1@20us",
                            "--recover", "ctsw1@60us", "--quiet", "--out", out],
                           capture_output=True, text=True,
                           env=dict(os.environ, ROCESW_READ_AHEAD=mode, ROCESW_REPLAY_STATS="1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"replay: reading ahead {mode}\n", p.stderr)
        files = {}
        for root, _, names in os.walk(out):
            for n in names:
                with open(os.path.join(root, n), "rb") as f:
                    files[os.path.relpath(os.path.join(root, n), out)] = f.read()
        return files

    def test_outputs_the_same_with_and_without(self):
        on, off = self.run_zone("on"), self.run_zone("off")
        self.assertGreater(len([n for n in on if n.endswith(".pcap")]), 20)
        self.assertEqual(sorted(on), sorted(off))
        for name in on:
            self.assertEqual(on[name], off[name], name)
        summary = json.loads(on["summary.json"])
        self.assertTrue(summary["collective"]["complete"])
        self.assertGreater(summary["collective"]["injected_drops"], 0)


if __name__ == "__main__":
    unittest.main()
