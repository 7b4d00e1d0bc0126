"""Full disks (docs/testing.md "Full disks"): each writer meets ENOSPC on a small tmpfs mounted by
the test, and must say which file it could not write and why, leave no file that looks complete
but is not (and no temporary one), and keep what was there before:
- `rocesw gen` whose captures do not fit: exit 1 naming the capture, no capture left;
- `rocesw replay` whose output captures do not fit: exit 1 naming the capture, no summary.json,
  capture or event log left (the run stopped at the first failed write); with room, the same
  run writes them all;
- `rocesw-dataplane --stats-json` on a full disk: exit 1 naming the file, none written; with room,
  the JSON is written;
- roceswd whose running copy's directory is full: the reload is refused naming the file,
  running-config.yaml is byte for byte what it was, the dataplane's generation unchanged; with
  room again, the next reload is applied and the copy is the new file.
Needs root (mount)."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import BUILD, ROCESW, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import wait_in_file  # noqa: E402

ENOSPC = "No space left on device"
REPLAY_CONFIG = """DEVICE_METADATA:
  localhost: {hostname: rp, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000, role: host}
  Ethernet8: {speed: 100000, role: host}
  Ethernet16: {speed: 10000, role: host}
NEIGH:
  "Ethernet16|10.1.0.5": {neigh: "02:00:00:01:00:02"}
STATIC_ROUTE:
  "10.1.0.5/32": {nexthop: "10.1.0.5"}
"""
NULL_PORTS = """DEVICE_METADATA:
  localhost: {hostname: fd, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000, role: host, devargs: "net_null0"}
  Ethernet8: {speed: 100000, role: uplink, devargs: "net_null1"}
"""


class FullDisk(unittest.TestCase):
    def setUp(self):
        require_root()
        self.dir = tmpdir()
        self.mounts = []

    def tearDown(self):
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], check=False)

    def tmpfs(self, name, size):
        """A tmpfs of `size` bytes (rounded up to pages) at DIR/name."""
        d = os.path.join(self.dir, name)
        os.mkdir(d)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", d],
                       check=True)
        self.mounts.append(d)
        return d

    @staticmethod
    def fill(d):
        """Fills d's file system to the last byte; returns the filler's path."""
        path = os.path.join(d, "filler")
        with open(path, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
            try:
                while True:
                    f.write(b"\0")
            except OSError:
                pass
        return path

    def assert_only(self, d, names):
        self.assertEqual(sorted(os.listdir(d)), sorted(names), "nothing else, no temporary")

    def test_gen_captures(self):
        d = self.tmpfs("gen", 256 * 1024)
        r = subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "4", "--message",
                            str(4 << 20), "--out", d], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, rf"rocesw gen: cannot write {d}/h[0-3]\.pcap: {ENOSPC} ")
        self.assert_only(d, [])

    def test_replay_captures_and_summary(self):
        gen = os.path.join(self.dir, "in")
        subprocess.run([ROCESW, "gen", "--pattern", "incast", "--hosts", "3", "--root", "2",
                        "--message", str(1 << 20), "--out", gen], check=True, capture_output=True)
        cfg = os.path.join(self.dir, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(REPLAY_CONFIG)
        need = sum(os.path.getsize(os.path.join(gen, f"h{i}.pcap")) for i in (0, 1))

        def replay(out):
            return subprocess.run([ROCESW, "replay", "--config", cfg, "--out", out, "--in",
                                   f"Ethernet0={gen}/h0.pcap", "--in", f"Ethernet8={gen}/h1.pcap"],
                                  capture_output=True, text=True)

        small = self.tmpfs("small", need // 2)  # not even the inputs' worth of captures
        r = replay(small)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, rf"cannot write {small}/Ethernet(0|8|16)\.pcap: {ENOSPC} "
                                   r"\(\d+ incomplete captures removed\)")
        self.assert_only(small, [])  # no summary, capture or event log of a run cut short
        big = self.tmpfs("big", 8 * need + (4 << 20))
        r = replay(big)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(big, "summary.json")) as f:
            self.assertIn("ports", json.load(f))
        for p in ("Ethernet0.pcap", "Ethernet8.pcap", "Ethernet16.pcap"):
            self.assertIn(p, os.listdir(big))

    def test_dataplane_stats_json(self):
        d = self.tmpfs("stats", 64 * 1024)
        filler = self.fill(d)
        cfg = os.path.join(self.dir, "null.yaml")
        with open(cfg, "w") as f:
            f.write(NULL_PORTS)
        stats = os.path.join(d, "stats.json")

        def run():
            return subprocess.run(dataplane_cmd("rswfull", "--config", cfg, "--duration", "0.5",
                                                "--stats-json", stats),
                                  capture_output=True, text=True, timeout=120)

        r = run()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"rocesw-dataplane: cannot write {stats}: {ENOSPC}", r.stderr)
        self.assert_only(d, ["filler"])
        os.unlink(filler)
        r = run()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(stats) as f:
            self.assertEqual([p["name"] for p in json.load(f)["ports"]], ["Ethernet0", "Ethernet8"])
        self.assert_only(d, ["stats.json"])

    def test_roceswd_running_copy(self):
        run = self.tmpfs("run", 256 * 1024)
        sock = os.path.join(run, "dp.sock")
        running = os.path.join(run, "running-config.yaml")
        cfg = os.path.join(self.dir, "switch.yaml")
        base = ("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 1024 --no-pci -l 0-1 --no-shconf "
                f"--file-prefix rswfulld --log-level error\", control_socket: {sock}}}\n" +
                NULL_PORTS + "STATIC_ROUTE:\n")
        # a config larger than the room left once the disk is full, smaller than the tmpfs
        routes = "".join(f'  "10.{i // 250}.{i % 250}.0/24": {{blackhole: true}}\n'
                         for i in range(200))
        with open(cfg, "w") as f:
            f.write(base + routes)
        log = os.path.join(self.dir, "roceswd.log")
        with open(log, "w") as lf:
            daemon = subprocess.Popen([os.path.join(BUILD, "roceswd"), "--config", cfg,
                                       "--foreground"], stdout=lf, stderr=lf)
        try:
            wait_in_file(log, "dataplane answers on")
            with open(running) as f:
                before = f.read()
            gen = self.generation(sock)
            filler = self.fill(run)
            with open(cfg, "w") as f:
                f.write(base + routes + '  "10.99.0.0/16": {blackhole: true}\n')
            daemon.send_signal(signal.SIGHUP)
            wait_in_file(log, "reload refused, the running config stays: cannot write ")
            with open(log) as f:
                line = [x for x in f if "reload refused" in x][-1]
            self.assertRegex(line, rf"cannot write {run}/\S+: {ENOSPC}")
            with open(running) as f:
                self.assertEqual(f.read(), before, "the running copy untouched")
            self.assertEqual(self.generation(sock), gen)
            self.assert_only(run, ["dp.sock", "filler", "running-config.yaml"])
            os.unlink(filler)
            daemon.send_signal(signal.SIGHUP)
            wait_in_file(log, "reloaded: ")
            with open(running) as f, open(cfg) as g:
                self.assertEqual(f.read(), g.read(), "the new copy, whole")
            self.assertEqual(self.generation(sock), gen + 1)
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()

    @staticmethod
    def generation(sock):
        r = subprocess.run([ROCESW, "show", "config", "--json", "--socket", sock],
                           capture_output=True, text=True, timeout=30)
        return json.loads(r.stdout)["generation"]


if __name__ == "__main__":
    unittest.main()
