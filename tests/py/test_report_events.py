"""The replay page reads events.jsonl in two ways: the lines replay writes are skimmed (an ECN
mark's time and switch read in place, other kinds the page does not draw passed over), anything
else is parsed whole with jansson. Both must read the same: the events of a congested incast on
zone-2stage, and the same events re-serialized by Python's json with spaces after each
separator (which the skim does not take, so every line is parsed whole), give byte-identical
pages (`rocesw report compare`, one run each under the same label), and the ECN total the page
shows equals the ecn_mark lines Python counts. Lines the skim must not take (a switch name with an
escaped quote, a time of 20 digits) are read whole: such a name's marks are its own series."""
import json
import os
import re
import shutil
import subprocess
import unittest

from common import ROCESW, ROOT, tmpdir


def run(*args):
    r = subprocess.run([ROCESW, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"{args[0]} failed ({r.returncode}): {r.stderr}")
    return r


def page(d, out):
    run("report", "compare", f"run={d}", "--out", out)
    with open(out, encoding="utf-8") as f:
        return f.read()


def ecn_total(html):
    totals = re.findall(r'\["ECN-marked packets","(\d+)"\]', html)
    assert len(totals) == 1, totals
    return int(totals[0])


class ReportEvents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tmpdir()
        cls.run_dir = os.path.join(cls.tmp, "skimmed")
        run("replay", "--quiet", "--config", os.path.join(ROOT, "config", "zone-2stage.yaml"),
            "--collective", "incast,size=4M", "--captures", "none", "--out", cls.run_dir)
        with open(os.path.join(cls.run_dir, "events.jsonl")) as f:
            cls.events = [json.loads(line) for line in f]
        cls.marks = sum(e["event"] == "ecn_mark" for e in cls.events)

    def copy_with(self, name, lines):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        shutil.copy(os.path.join(self.run_dir, "summary.json"), d)
        with open(os.path.join(d, "events.jsonl"), "w") as f:
            f.writelines(line + "\n" for line in lines)
        return d

    def test_skimmed_and_parsed_whole_agree(self):
        self.assertGreater(self.marks, 1000)  # congested: the skim is what reads most lines
        spaced = self.copy_with("whole", (json.dumps(e, separators=(", ", ": "))
                                          for e in self.events))
        a = page(self.run_dir, os.path.join(self.tmp, "a.html"))
        b = page(spaced, os.path.join(self.tmp, "b.html"))
        self.assertEqual(ecn_total(a), self.marks)
        self.assertEqual(a, b)

    def test_lines_the_skim_does_not_take(self):
        mark = next(e for e in self.events if e["event"] == "ecn_mark")
        odd = dict(mark, switch='rt"sw9')
        lines = [json.dumps(e, separators=(",", ":")) for e in self.events]
        # a name with an escape, and a time longer than 19 digits: both read whole by jansson
        # (the second a number jansson refuses, as too large: a line with no event, not a mark)
        lines.append(json.dumps(odd, separators=(",", ":")))
        lines.append('{"t":123456789012345678901,"event":"ecn_mark","switch":"rtsw1"}')
        d = self.copy_with("odd", lines)
        html = page(d, os.path.join(self.tmp, "odd.html"))
        self.assertIn('rt\\"sw9', html)
        self.assertEqual(ecn_total(html), self.marks + 1)


if __name__ == "__main__":
    unittest.main()
