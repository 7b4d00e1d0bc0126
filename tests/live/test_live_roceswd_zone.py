"""Live: `roceswd --zone` runs a copy of tests/configs/zone-ecmp2 (4 switches, the lab of
scripts/lab.py: a namespace per host) through one rocesw-dataplane --zone and one control socket.

- `rocesw show ... --switch NAME` answers for every switch with what its config says (routes
  read here from the YAML files).
- A saved change of rtsw1 (a route added, an ECMP member removed) is reloaded as one transaction
  on rtsw1 only: rtsw1's generation grows by one, the other three keep generation, routes and
  ECMP groups; roceswd's log says which switches had no transaction.
- Two switches' configs broken (three errors) beside a valid rtsw1 change: nothing changes on any
  switch, the log names both switches with each of their errors (file:line computed here).
  A change only the dataplane can refuse (a linked port's speed: the link would change) is
  refused the same way, naming the switch and each port. A changed LINK table is refused as a
  topology change.
- /metrics passes promtool; every sample of the switches' families carries switch="NAME" with
  the zone's four names, per-switch generation included; DPDK telemetry's answers name the
  switch.
- kill -9 of the zone dataplane: roceswd restarts it from the last applied zone (rtsw1 has the
  reloaded route, not the refused ones) and counts the restart."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import BUILD, ROCESW, ROOT, require_root, tmpdir  # noqa: E402
from labnet import wait_in_file  # noqa: E402

ROCESWD = os.path.join(BUILD, "roceswd")
LAB = os.path.join(ROOT, "scripts", "lab.py")
SRC = os.path.join(ROOT, "tests", "configs", "zone-ecmp2")
PREFIX = "rswdzone"
PORT = 19493
SWITCHES = {"rtsw1", "rtsw2", "ctsw1", "ctsw2"}
# roceswd's own families: one process, not one switch (docs/roceswd.md)
DAEMON_FAMILIES = {"rocesw_build_info", "rocesw_dataplane_up", "rocesw_dataplane_restarts_total",
                   "rocesw_config_reloads_total", "rocesw_config_reload_in_progress",
                   "rocesw_metrics_connections_cut_total"}
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def line_of(path, text):
    """1-based number of the first line of path holding text."""
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


class LiveRoceswdZone(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        cls.zdir = os.path.join(cls.dir, "zone")
        shutil.copytree(SRC, cls.zdir)
        cls.zone = os.path.join(cls.zdir, "zone.yaml")
        cls.sock = os.path.join(cls.dir, "run", "dp.sock")
        with open(cls.zone) as f:
            text = f.read()
        text += ("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 2048 --no-pci -l 0-1 --no-shconf "
                 f"--file-prefix {PREFIX} --log-level error\", control_socket: {cls.sock}, "
                 f"metrics_port: {PORT}}}\n")
        with open(cls.zone, "w") as f:
            f.write(text)
        cls.good = {}
        for sw in SWITCHES:
            with open(cls.cfg(sw)) as f:
                cls.good[sw] = f.read()
        cls.good["zone"] = text
        cls.daemon = None
        subprocess.run([LAB, "down", cls.zone], capture_output=True)  # a lab left by a crash
        r = subprocess.run([LAB, "up", cls.zone], capture_output=True, text=True)
        if r.returncode:
            raise AssertionError(f"lab.py up: {r.stdout}{r.stderr}")
        try:
            cls.log = open(os.path.join(cls.dir, "roceswd.log"), "w+")
            cls.daemon = subprocess.Popen([ROCESWD, "--zone", cls.zone, "--foreground"],
                                          stdout=cls.log, stderr=cls.log)
            cls.wait_log("running: zone")
            cls.wait_log("dataplane answers on")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.daemon and cls.daemon.poll() is None:
            cls.daemon.send_signal(signal.SIGTERM)
            cls.daemon.wait(60)
        subprocess.run([LAB, "down", cls.zone], capture_output=True)
        cls.log.close()

    @classmethod
    def cfg(cls, sw):
        return os.path.join(cls.zdir, f"{sw}.yaml")

    @classmethod
    def wait_log(cls, text, count=1, timeout=60):
        wait_in_file(cls.log.name, text, count, timeout)

    @classmethod
    def log_count(cls, text):
        with open(cls.log.name) as f:
            return f.read().count(text)

    @classmethod
    def log_lines(cls, text, since=0):
        with open(cls.log.name) as f:
            return [line for line in f.readlines()[since:] if text in line]

    @classmethod
    def log_len(cls):
        with open(cls.log.name) as f:
            return len(f.readlines())

    def write(self, name, text):
        """Replaces a file by rename, as editors do (roceswd sees it once, whole)."""
        path = self.zone if name == "zone" else self.cfg(name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.rename(path + ".tmp", path)

    def since(self, mark):
        with open(self.log.name) as f:
            return f.readlines()[mark:]

    def wait_since(self, mark, text, timeout=60):
        """The log lines after line `mark`, once one of them holds text."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            lines = self.since(mark)
            if any(text in x for x in lines):
                return lines
            time.sleep(0.05)
        raise AssertionError(f"'{text}' not in the log after line {mark}: {''.join(lines)}")

    def rocesw(self, *args):
        r = subprocess.run([ROCESW, *args, "--json", "--socket", self.sock], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def state(self):
        """Per switch: generation, routes, ECMP groups without their packet counters."""
        out = {}
        for sw in SWITCHES:
            groups = self.rocesw("show", "ecmp", "--switch", sw)
            for g in groups:
                g.pop("packets", None)
                for m in g["members"]:
                    m.pop("packets", None)
            out[sw] = {"generation": self.rocesw("show", "config", "--switch", sw)["generation"],
                       "routes": sorted(r["prefix"] for r in
                                        self.rocesw("show", "routes", "--switch", sw)),
                       "ecmp": groups}
        return out

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=30) as r:
            return r.read().decode()

    def test_1_show_every_switch(self):
        for sw in SWITCHES:
            with open(self.cfg(sw)) as f:
                want = sorted(yaml.safe_load(f)["STATIC_ROUTE"])
            got = sorted(r["prefix"] for r in self.rocesw("show", "routes", "--switch", sw))
            self.assertEqual(got, want, sw)
            self.assertEqual(self.rocesw("show", "config", "--switch", sw)["hostname"], sw)
        run = os.path.join(self.dir, "run", "running-zone")
        self.assertEqual(sorted(os.listdir(run)),
                         sorted([f"{s}.yaml" for s in SWITCHES] + ["zone.yaml"]))

    def test_2_reload_changes_one_switch(self):
        before = self.state()
        text = self.good["rtsw1"].replace(
            '"10.1.0.0/16": {nexthop_group: uplinks}',
            '"10.1.0.0/16": {nexthop_group: uplinks}\n  "10.9.0.0/16": {nexthop_group: uplinks}')
        text = text.replace('nexthop: "10.254.1.0,10.254.1.2,10.254.2.0,10.254.2.2"',
                            'nexthop: "10.254.1.0,10.254.1.2,10.254.2.0"')
        mark = self.log_len()
        self.write("rtsw1", text)
        lines = self.wait_since(mark, "reloaded: zone")
        self.good["rtsw1"] = text
        after = self.state()
        self.assertEqual(after["rtsw1"]["generation"], before["rtsw1"]["generation"] + 1,
                         "one transaction on rtsw1")
        self.assertIn("10.9.0.0/16", after["rtsw1"]["routes"])
        self.assertEqual(len(after["rtsw1"]["ecmp"][0]["members"]), 3)
        for sw in SWITCHES - {"rtsw1"}:
            self.assertEqual(after[sw], before[sw], f"{sw} untouched")
            self.assertEqual(len([x for x in lines if f"switch {sw}: 0 table writes" in x and
                                  "no transaction" in x]), 1, sw)
        gens = {s["switch"]: s["value"] for s in self.samples(self.scrape())
                if s["name"] == "rocesw_config_generation"}
        self.assertEqual(gens, {sw: float(after[sw]["generation"]) for sw in SWITCHES})

    def test_3_refused_switch_changes_nothing(self):
        before = self.state()
        mark = self.log_len()
        # every file written leaves the zone refused (the valid rtsw1 change comes last), so
        # whichever of the reloads they cause sees them, none may apply anything
        self.write("rtsw2", self.good["rtsw2"].replace("resilient: true", "resilient: maybe"))
        self.write("ctsw2", self.good["ctsw2"]
                   .replace("Ethernet8: {speed: 400000, role: downlink}",
                            "Ethernet8: {speed: 400000, role: downlink, colour: red}")
                   .replace('"10.1.0.3/32": {nexthop_group: rack2}',
                            '"10.1.0.300/32": {nexthop_group: rack2}'))
        self.write("rtsw1", self.good["rtsw1"].replace('"10.9.0.0/16"', '"10.8.0.0/16"'))
        self.wait_since(mark, "2 of 4 switches refused (rtsw2, ctsw2), no switch changed")
        expect = [f"switch rtsw2: {self.cfg('rtsw2')}:{line_of(self.cfg('rtsw2'), 'maybe')}:",
                  f"switch ctsw2: {self.cfg('ctsw2')}:{line_of(self.cfg('ctsw2'), 'colour')}:",
                  f"switch ctsw2: {self.cfg('ctsw2')}:{line_of(self.cfg('ctsw2'), '10.1.0.300')}:"]
        text = "".join(self.since(mark))
        for e in expect:
            self.assertIn(e, text)
        self.assertNotIn("switch rtsw1:", text)
        self.assertEqual(self.state(), before, "no switch changed")

        # what only the dataplane knows: the links run at the speed of the ports they joined;
        # ctsw1 broken first, so that no file written leaves a zone that would apply
        self.write("ctsw1", self.good["ctsw1"].replace("speed: 400000", "speed: 100000"))
        self.write("rtsw2", self.good["rtsw2"])
        self.write("ctsw2", self.good["ctsw2"])
        lines = self.wait_since(mark, "the running zone stays on every switch")
        # (the three writes may each cause a reload: several verdicts, each naming every port)
        refusals = [x for x in lines if "reload not applied" in x and "ctsw1: PORT|" in x]
        self.assertEqual({re.search(r"PORT\|(\w+)", x).group(1) for x in refusals},
                         {"Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"}, "".join(lines))
        self.assertEqual(len(refusals) % 4, 0, "every verdict names all four ports")
        self.assertEqual(self.state(), before, "no switch changed")
        self.assertFalse(any("reloaded:" in x for x in self.since(mark)))

        # back to the applied configs: rtsw1 first (ctsw1 still refuses), then ctsw1
        self.write("rtsw1", self.good["rtsw1"])
        mark = self.log_len()
        self.write("ctsw1", self.good["ctsw1"])
        lines = self.wait_since(mark, "reloaded: zone")
        self.assertIn("0 table writes on 4 switches", "".join(lines))
        self.assertEqual(self.state(), before)

    def test_4_topology_change_refused(self):
        before = self.state()
        mark = self.log_len()
        self.write("zone", self.good["zone"].replace('b: "rtsw1|Ethernet0", length: 5m',
                                                     'b: "rtsw1|Ethernet0", length: 7m'))
        self.wait_since(mark, "the LINK table changed: a topology change needs a restart")
        self.assertEqual(self.state(), before)
        mark = self.log_len()
        self.write("zone", self.good["zone"])
        lines = self.wait_since(mark, "reloaded: zone")
        self.assertIn("0 table writes on 4 switches", "".join(lines))
        self.assertEqual(self.state(), before, "the same zone again: no transaction anywhere")

    @staticmethod
    def samples(text):
        out = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            assert m, line
            labels = dict(LABEL.findall(m.group(2) or ""))
            out.append({"name": m.group(1), "labels": labels, "switch": labels.get("switch"),
                        "value": float(m.group(3))})
        return out

    def test_5_metrics_labelled_by_switch(self):
        text = self.scrape()
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        samples = self.samples(text)
        per_switch = [s for s in samples if s["name"] not in DAEMON_FAMILIES]
        self.assertGreater(len(per_switch), 100)
        unlabelled = [s for s in per_switch if s["switch"] is None]
        self.assertEqual(unlabelled, [], "every switch sample names its switch")
        self.assertEqual({s["switch"] for s in per_switch}, SWITCHES)
        for s in samples:
            if s["name"] in DAEMON_FAMILIES:
                self.assertIsNone(s["switch"], s)
        for sw in SWITCHES:
            with open(self.cfg(sw)) as f:
                ports = set(yaml.safe_load(f)["PORT"])
            got = {s["labels"]["port"] for s in per_switch
                   if s["name"] == "rocesw_port_rx_packets_total" and s["switch"] == sw}
            self.assertEqual(got, ports, sw)

        def tel(cmd):
            r = subprocess.run(["dpdk-telemetry.py", "-f", PREFIX], input=cmd + "\n",
                               capture_output=True, text=True, timeout=30)
            start = r.stdout.index("{")
            return json.loads(r.stdout[start:r.stdout.rindex("}") + 1])[cmd.split(",")[0]]
        for sw in SWITCHES:
            self.assertEqual(tel(f"/rocesw/counters,{sw}")["switch"], sw)
            self.assertEqual(tel(f"/rocesw/port_stats,{sw}|Ethernet0")["switch"], sw)

    def test_6_kill9_restarts_from_last_applied(self):
        before = self.state()
        started = self.log_lines("started dataplane pid")
        pid = int(re.search(r"started dataplane pid (\d+)", started[-1]).group(1))
        answers = self.log_count("dataplane answers on")
        os.kill(pid, signal.SIGKILL)
        self.wait_log("restarting the dataplane (restart 1)")
        self.wait_log("dataplane answers on", answers + 1)
        after = self.state()
        for sw in SWITCHES:
            self.assertEqual(after[sw]["routes"], before[sw]["routes"], sw)
            self.assertEqual(after[sw]["ecmp"], before[sw]["ecmp"], sw)
            self.assertEqual(after[sw]["generation"], 1, f"{sw}: a new dataplane")
        self.assertIn("10.9.0.0/16", after["rtsw1"]["routes"])
        self.assertNotIn("10.8.0.0/16", after["rtsw1"]["routes"])
        restarts = [s for s in self.samples(self.scrape())
                    if s["name"] == "rocesw_dataplane_restarts_total"]
        self.assertEqual([s["value"] for s in restarts], [1.0])


if __name__ == "__main__":
    unittest.main(verbosity=1)
