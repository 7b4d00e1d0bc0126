"""The PFC frames the switch builds are byte-identical to scapy's MACControlClassBasedFlowControl
(contrib/mac_control.py) for the same source MAC, class-enable vector and pause times, and tshark
reads the same vector and times from them."""
import os
import random
import subprocess
import unittest

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from common import BUILD, tmpdir, tshark_fields, write_pcap

HELPER = os.path.join(BUILD, "tests", "pfc_frame")
MAC = "02:00:00:00:01:00"


def ours(enable, times):
    out = subprocess.run([HELPER, MAC, str(enable)] + [str(t) for t in times],
                         capture_output=True, text=True, check=True).stdout.strip()
    return bytes.fromhex(out)


def scapys(enable, times):
    fields = {}
    for i in range(8):
        fields[f"c{i}_enabled"] = (enable >> i) & 1
        fields[f"c{i}_pause_time"] = times[i]
    return bytes(Ether(src=MAC, dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(**fields))


class PfcFrame(unittest.TestCase):
    def test_identical_to_scapy(self):
        rnd = random.Random(7)
        cases = [(0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0]), (0x18, [0] * 8), (0xFF, list(range(1, 9)))]
        cases += [(rnd.randrange(256), [rnd.randrange(65536) for _ in range(8)]) for _ in range(50)]
        frames = []
        for enable, times in cases:
            a, b = ours(enable, times), scapys(enable, times)
            self.assertEqual(a, b, f"enable {enable:#x} times {times}")
            frames.append(a)
        path = os.path.join(tmpdir(), "pfc.pcap")
        write_pcap(path, [Ether(f) for f in frames])
        rows = tshark_fields(path, ["macc.cbfc.enbv"] +
                             [f"macc.cbfc.pause_time.c{i}" for i in range(8)])
        for (enable, times), row in zip(cases, rows):
            self.assertEqual(int(row["macc.cbfc.enbv"], 0), enable)
            self.assertEqual([int(row[f"macc.cbfc.pause_time.c{i}"]) for i in range(8)], times)


if __name__ == "__main__":
    unittest.main(verbosity=1)
