"""What every program tells a person before it does anything: --version equals the version in
meson.build for rocesw, rocesw-dataplane and roceswd; a dataplane that cannot start names the real
cause (a missing interface, no hugepages); replay writes no progress line when stderr is not a
terminal, and one (rewritten with \\r) when it is, unless --quiet."""
import os
import pty
import re
import shutil
import subprocess
import unittest

from common import BUILD, DATAPLANE, ROCESW, ROOT, dataplane_cmd, tmpdir

ROCESWD = os.path.join(BUILD, "roceswd")
ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")


def meson_version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


def run_on_pty(cmd):
    """cmd with stderr on a pseudo-terminal (stdout discarded); what it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO once the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    p.wait()
    return p.returncode, out.decode(errors="replace")


class Cli(unittest.TestCase):
    def test_version_everywhere(self):
        v = meson_version()
        for prog, name in ((ROCESW, "rocesw"), (DATAPLANE, "rocesw-dataplane"),
                           (ROCESWD, "roceswd")):
            r = subprocess.run([prog, "--version"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.startswith(f"{name} {v}"), r.stdout)

    def test_missing_interface_named(self):
        d = tmpdir()
        cfg = os.path.join(d, "sw.yaml")
        with open(cfg, "w") as f:
            f.write('PORT:\n  Ethernet0: {speed: 10000, devargs: "net_af_packet0,iface=rswnoif0"}\n')
        r = subprocess.run(dataplane_cmd("rsw-cli-test", "--config", cfg, mem=256),
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no network interface 'rswnoif0'", r.stderr)

    def test_control_socket_never_replaces_a_file(self):
        """The socket is bound under a temporary name and renamed into place: a path that is
        a regular file is refused, its content left as it was."""
        d = tmpdir()
        cfg, victim = os.path.join(d, "sw.yaml"), os.path.join(d, "victim")
        with open(cfg, "w") as f:
            f.write('PORT:\n  Ethernet0: {speed: 10000, devargs: "net_null0"}\n')
        with open(victim, "w") as f:
            f.write("keep\n")
        r = subprocess.run(dataplane_cmd("rsw-cli-sock", "--config", cfg, "--control-socket",
                                         victim, mem=512),
                           capture_output=True, text=True, timeout=60)
        self.assertIn(f"--control-socket {victim}: exists and is not a socket", r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertNotIn("File exists", r.stderr)

    def test_hugepage_hint(self):
        """Without --no-huge, EAL fails on a machine with no hugepages; the hint says so. On a
        machine with hugepages there must be no such hint."""
        with open("/proc/meminfo") as f:
            total = int(re.search(r"HugePages_Total:\s+(\d+)", f.read()).group(1))
        r = subprocess.run([DATAPLANE, "--no-pci", "-l", "0-1", "--file-prefix", "rsw-cli-huge",
                            "--log-level", "error", "--", "--config",
                            os.path.join(ROOT, "config", "rtsw.yaml")],
                           capture_output=True, text=True, timeout=60)
        hint = "no hugepages are reserved on this machine: pass --no-huge -m 1024"
        if total == 0:
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(hint, r.stderr)
        else:
            self.assertNotIn(hint, r.stderr)

    def test_progress_only_on_a_terminal(self):
        d = tmpdir()
        try:
            gen = os.path.join(d, "gen")
            subprocess.run([ROCESW, "gen", "--pattern", "ring", "--hosts", "8", "--message",
                            "1048576", "--out", gen], check=True, capture_output=True)
            # the first progress line is due after 4096 events: this run has many more
            r = subprocess.run([ROCESW, "replay", "--config", ZONE, "--in-dir", gen, "--out",
                                os.path.join(d, "piped")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("\r", r.stderr)
            self.assertNotIn("frames in", r.stderr)
            rc, tty = run_on_pty([ROCESW, "replay", "--config", ZONE, "--in-dir", gen, "--out",
                                  os.path.join(d, "tty")])
            self.assertEqual(rc, 0, tty)
            self.assertIn("\rreplay: ", tty)
            rc, quiet = run_on_pty([ROCESW, "replay", "--config", ZONE, "--in-dir", gen,
                                    "--out", os.path.join(d, "quiet"), "--quiet"])
            self.assertEqual(rc, 0, quiet)
            self.assertNotIn("frames in", quiet)
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
