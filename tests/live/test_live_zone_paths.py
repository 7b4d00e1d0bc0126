"""Live and replay agree on paths: `config/zone-2stage.yaml` run live (`lab.py up`,
`rocesw-dataplane --zone`) and the same RoCEv2 frames replayed offline through the same zone
file take the same RTSW uplink and the same CTSW for every flow. 16 flows h0 -> h1 (one
destination QP each, with the UDP source port Linux derives from the QP numbers) are sent one
at a time from a raw socket in h0's namespace; the live path of each is the rtsw1 uplink and the
CTSW port towards rtsw2 whose transmit counters grew by the flow's frames (the zone's control
socket), the replayed path the hops of that flow in summary.json's `path`."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import ROCESW, ROOT, dataplane_cmd, require_root, tmpdir, write_pcap  # noqa: E402
from labnet import Control, Lab, wait_for_line, wait_until  # noqa: E402

LAB = os.path.join(ROOT, "scripts", "lab.py")
ZONE = os.path.join(ROOT, "config", "zone-2stage.yaml")
H0_MAC, GATEWAY_MAC = "02:00:00:01:00:00", "02:00:00:00:01:00"  # rtsw1's NEIGH, its Ethernet0
PER_FLOW = 4
UPLINKS = ("rtsw1|Ethernet256", "rtsw1|Ethernet264")
DOWNLINKS = ("ctsw1|Ethernet8", "ctsw2|Ethernet8")  # each CTSW's port to rtsw2


def flow_frames(k):
    qp = 0x100 + k
    sport = rocepkt.linux_sport(0x40 + k, qp)
    return sport, qp, [rocepkt.roce(src="10.1.0.1", dst="10.1.0.3", dqp=qp, psn=p, sport=sport,
                                    smac=H0_MAC, dmac=GATEWAY_MAC, payload=bytes(256))
                       for p in range(PER_FLOW)]


def tx(counters):
    out = {}
    for sw in counters["switches"]:
        for p in sw["ports"]:
            out[f"{sw['name']}|{p['name']}"] = p["tx_packets"]
    return out


class LiveZonePaths(unittest.TestCase):
    def test_live_and_replay_take_the_same_paths(self):
        require_root()
        d = tmpdir()
        flows = [flow_frames(k) for k in range(16)]
        # offline: the frames as h0's capture, 1 us apart
        gen = os.path.join(d, "in")
        os.makedirs(gen)
        frames = [f for _, _, fs in flows for f in fs]
        for i, f in enumerate(frames):
            f.time = 1 + i * 1e-6
        write_pcap(os.path.join(gen, "h0.pcap"), frames)
        out = os.path.join(d, "replay")
        r = subprocess.run([ROCESW, "replay", "--quiet", "--config", ZONE, "--in-dir", gen,
                            "--out", out, "--captures", "none"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        replayed = {}
        for fl in s["flows"]:
            hops = [h["from"] for h in fl["path"]]
            replayed[(fl["sport"], fl["dest_qp"])] = (
                next(h for h in hops if h in UPLINKS), next(h for h in hops if h in DOWNLINKS))
            self.assertEqual(fl["packets_out"], PER_FLOW)
        self.assertEqual(len(replayed), 16)

        # live: the same frames, flow by flow
        sock = os.path.join(d, "ctl.sock")
        r = subprocess.run([LAB, "up", ZONE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lab = Lab("rswzp")
        try:
            dp = lab.start(dataplane_cmd("rswzonepaths", "--zone", ZONE, "--control-socket",
                                         sock, mem=2048),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for_line(dp.stderr, "forwarding", timeout=120)
            ctl, raw = Control(sock), lab.socket("h0")
            live = {}
            for sport, qp, fs in flows:
                t0 = tx(ctl.counters())
                for f in fs:
                    raw.send(bytes(f))

                def moved():
                    t1 = tx(ctl.counters())
                    grew = {p: t1[p] - t0[p] for p in UPLINKS + DOWNLINKS + ("rtsw2|Ethernet0",)}
                    # every frame counted on each hop (rtsw2 to h1 possibly with h1's own
                    # chatter): one reading takes the switches one after another while the
                    # worker forwards, so rtsw1 may be read before the frames left it and
                    # rtsw2 after they reached h1
                    return grew if (grew["rtsw2|Ethernet0"] >= PER_FLOW and
                                    sum(grew[p] for p in UPLINKS) >= PER_FLOW and
                                    sum(grew[p] for p in DOWNLINKS) >= PER_FLOW) else None
                grew = wait_until(moved, f"flow {sport}/{qp} to reach h1")
                up = [p for p in UPLINKS if grew[p]]
                down = [p for p in DOWNLINKS if grew[p]]
                self.assertEqual([grew[p] for p in up + down], [PER_FLOW, PER_FLOW],
                                 f"flow {sport}/{qp}: one uplink, one CTSW: {grew}")
                live[(sport, qp)] = (up[0], down[0])
            self.assertEqual(Lab.stop(dp), 0, "the dataplane exits cleanly")
        finally:
            lab.close()
            subprocess.run([LAB, "down", ZONE], capture_output=True, text=True)
        self.assertEqual(live, replayed)
        self.assertEqual({up for up, _ in live.values()}, set(UPLINKS), "both uplinks used")


if __name__ == "__main__":
    unittest.main(verbosity=1)
