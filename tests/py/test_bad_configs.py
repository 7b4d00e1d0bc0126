"""Every bad config in tests/bad-configs is refused with the messages its first lines expect
(`# expect: {file}:LINE: KEY: ...`, one line per error: all are reported at once) and a
non-zero exit, by `rocesw check-config` and by the
dataplane, which must not start. The shipped examples load, with the counts their YAML holds."""
import glob
import os
import subprocess
import tempfile
import unittest

import yaml

from common import BUILD, ROCESW, ROOT, dataplane_cmd

ROCESWD = os.path.join(BUILD, "roceswd")


class BadConfigs(unittest.TestCase):
    def test_each_bad_config(self):
        files = sorted(glob.glob(os.path.join(ROOT, "tests", "bad-configs", "*.yaml")))
        self.assertGreaterEqual(len(files), 20)
        for f in files:
            rel = os.path.relpath(f, ROOT)
            with self.subTest(config=rel):
                with open(f) as fh:
                    expect = [l for l in fh.read().split("\n") if l.startswith("# expect: ")]
                self.assertTrue(expect, "the first lines must say what to expect")
                # every error of the file, one a line, in file order
                want = "\n".join(l[len("# expect: "):].replace("{file}", rel) for l in expect)
                r = subprocess.run([ROCESW, "check-config", rel], cwd=ROOT, capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 1)
                self.assertEqual(r.stderr.strip(), want)
                self.assertEqual(r.stdout, "")

    def test_dataplane_refuses_to_start(self):
        rel = "tests/bad-configs/route-unknown-group.yaml"
        r = subprocess.run(dataplane_cmd("rsw-bad", "--config", rel),
                           cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("route 10.9.0.0/16: no next-hop group named 'spines'", r.stderr)

    def test_not_a_file(self):
        """A directory or a FIFO as the config is named for what it is, by check-config, the
        dataplane and roceswd, at once (a FIFO with no writer must not hang the open)."""
        d = tempfile.mkdtemp(prefix="rsw-notfile-")
        fifo = os.path.join(d, "fifo.yaml")
        os.mkfifo(fifo)
        try:
            for path, kind in ((d, "a directory"), (fifo, "a FIFO")):
                want = f"{path}: is {kind}; expected a config file"
                runs = {
                    "check-config": [ROCESW, "check-config", path],
                    "dataplane": dataplane_cmd("rsw-notfile", "--config", path),
                    "roceswd": [ROCESWD, "--config", path, "--foreground"],
                }
                for who, cmd in runs.items():
                    with self.subTest(who=who, kind=kind):
                        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                        self.assertNotEqual(r.returncode, 0)
                        self.assertIn(want, r.stderr)
                        self.assertNotIn("YAML syntax error", r.stderr)
        finally:
            os.unlink(fifo)
            os.rmdir(d)

    def test_examples_load(self):
        for name in ("rtsw.yaml", "ctsw.yaml", "lab.yaml"):
            path = os.path.join(ROOT, "config", name)
            with open(path) as fh:
                doc = yaml.safe_load(fh)
            groups = len(doc.get("NEXTHOP_GROUP", {})) + sum(
                1 for v in doc.get("STATIC_ROUTE", {}).values() if "," in str(v.get("nexthop", "")))
            routes = len(doc.get("STATIC_ROUTE", {})) + len(doc.get("POLICY_ROUTE", {}))
            policies = 1 + len(doc.get("HASH_POLICY", {}))
            want = (f"{path}: ok: {len(doc['PORT'])} ports, {len(doc.get('NEIGH', {}))} neighbours, "
                    f"{groups} next-hop groups, {routes} routes, {policies} hash policies")
            r = subprocess.run([ROCESW, "check-config", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), want)


if __name__ == "__main__":
    unittest.main(verbosity=1)
