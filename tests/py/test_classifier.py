"""Classifier before the TC map (issue: CTS priority): the shipped rules put DSCP 48 and CNPs
(BTH opcode 0x81) on TC 6; a config's rules (ternary DSCP and opcode, QP and length ranges,
ingress port, priority order) decide the TC of random packets exactly as the rules written out in
Python here say; bad rules are refused with their message."""
import os
import random
import subprocess
import unittest

import rocepkt
from common import ROCESW, ROOT, inspect, tmpdir, write_pcap

BASE = os.path.join(ROOT, "tests", "configs", "ecmp4.yaml")
AZURE_TC = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}
AZURE_PG = {3: 3, 4: 4, 7: 7}

RULES = """
CLASSIFIER:
  small_reads: {priority: 50, bth_opcode: "0x0C/0xFF", length: "0-200", tc: 5}
  qp_band:     {priority: 40, dest_qp: "0x100-0x1ff", tc: 2}
  dscp_band:   {priority: 30, dscp: "24/0x38", tc: 4}
  from_h1:     {priority: 20, in_port: Ethernet8, dscp: 10, tc: 0}
"""


def expected_tc(dscp, opcode, qp, length, in_port):
    """The rules above, first match by priority; else the AZURE DSCP map."""
    if opcode == 0x0C and length <= 200:
        return 5
    if 0x100 <= qp <= 0x1FF:
        return 2
    if dscp & 0x38 == 24:
        return 4
    if in_port == "Ethernet8" and dscp == 10:
        return 0
    return AZURE_TC.get(dscp, 1)


class Classifier(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()

    def run_frames(self, frames, config, in_port="Ethernet0"):
        path = write_pcap(os.path.join(self.dir, "in.pcap"), frames)
        return inspect(path, "--config", config, "--in-port", in_port)

    def test_shipped_rules_cts_and_cnp(self):
        frames = [rocepkt.roce(opcode=0x81, dst="10.1.0.1", dscp=3, payload=b"\0" * 16),
                  rocepkt.roce(opcode=0x0A, dst="10.1.0.1", dscp=48),
                  rocepkt.roce(opcode=0x0A, dst="10.1.0.1", dscp=3)]
        recs = self.run_frames(frames, BASE)
        self.assertEqual([(r["tc"], r["pg"]) for r in recs], [(6, 0), (6, 0), (3, 3)])

    def test_config_rules_match_python(self):
        config = os.path.join(self.dir, "cls.yaml")
        with open(BASE) as src, open(config, "w") as dst:
            dst.write(src.read() + RULES)
        rnd = random.Random(11)
        cases = []
        for _ in range(400):
            dscp = rnd.choice([3, 10, 24, 27, 31, 32, 46, 48, rnd.randrange(64)])
            opcode = rnd.choice([0x0C, 0x0A, 0x11, 0x81])
            qp = rnd.choice([0x80, 0x100, 0x1FF, 0x200, rnd.randrange(1 << 24)])
            size = rnd.choice([0, 16, 64, 150, 1024])
            cases.append((dscp, opcode, qp, size))
        for in_port in ("Ethernet0", "Ethernet8"):
            frames = [rocepkt.roce(opcode=op, dqp=qp, dst="10.1.0.1", dscp=d, payload=b"\0" * sz)
                      for d, op, qp, sz in cases]
            recs = self.run_frames(frames, config, in_port)
            for f, (d, op, qp, _), r in zip(frames, cases, recs):
                want = expected_tc(d, op, qp, len(bytes(f)), in_port)
                self.assertEqual(r["tc"], want, f"dscp {d} opcode {op:#x} qp {qp:#x} "
                                 f"len {len(bytes(f))} in {in_port}")
                self.assertEqual(r["pg"], AZURE_PG.get(want, 0))
        # the file's CLASSIFIER replaced the shipped rules: DSCP 48 follows the map (also 6),
        # but a CNP with DSCP 3 is now TC 3
        recs = self.run_frames([rocepkt.roce(opcode=0x81, dst="10.1.0.1", dscp=3,
                                             payload=b"\0" * 16)], config)
        self.assertEqual(recs[0]["tc"], 3)

    def test_bad_rules_refused(self):
        bad = {
            "dscp: 64": "expected a value 0..63",
            'dscp: "24/0x07"': "value bits outside the mask not allowed",
            'dest_qp: "0x200-0x100"': "expected a range lo-hi within 0..16777215",
            "in_port: Ethernet99": "no port named 'Ethernet99' in PORT",
            "colour: red": "unknown field 'colour'",
        }
        for field, message in bad.items():
            config = os.path.join(self.dir, "bad.yaml")
            with open(BASE) as src, open(config, "w") as dst:
                dst.write(src.read() + f"CLASSIFIER:\n  r: {{{field}, tc: 1}}\n")
            r = subprocess.run([ROCESW, "check-config", config], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(message, r.stderr)
            self.assertIn("CLASSIFIER|r", r.stderr)
        with open(BASE) as src, open(config, "w") as dst:
            dst.write(src.read() + "CLASSIFIER:\n  r: {dscp: 1}\n")
        r = subprocess.run([ROCESW, "check-config", config], capture_output=True, text=True)
        self.assertIn("missing 'tc'", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
