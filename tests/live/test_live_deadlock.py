"""Live PFC deadlock (docs/control.md, "show deadlock"): the bounce zone of config/zone-deadlock
run by `rocesw-dataplane --zone` over namespaces (scripts/lab.py), with links ctsw1-rtsw1 and
ctsw2-rtsw2 set down, so that each CTSW detours the rack it lost down through another rack, which
sends it back up. The switch-to-switch links run at 10 Mb/s (the test's copy of the zone) so that
eight Python senders, each sending 1 kB RoCE frames on DSCP 3 (TC 3, lossless) to the hosts of
the other racks, fill the fabric's lossless PGs past XOFF; the hosts ignore PFC (the kernel does).

Why the cycle is certain, not a matter of scheduling. A cycle of paused queues seen while the
senders run may be passing: each member's peer PG also holds frames that leave the cycle, and the
switch's other queues hold frames whose departure frees descriptors, which raises the PG's
dynamic threshold (alpha x free descriptors, docs/tm.md "Packets as well as bytes"); either can
take a peer PG below XON once the senders stop, and the cycle then drains (one CI run saw that).
So once the detector names the cycle, its four member queues are held by an injected PFC storm
(`rocesw set pfc-storm`: paused as by a peer that keeps sending XOFF), the senders stop, and the
test waits on the counters until nothing can move: no frame on a link and every queue holding
frames paused. In
that frozen state no PG's occupancy, no descriptor count and so no threshold changes any more.
If each member's peer PG is then still over XOFF (the detector names the cycle; the test also
checks each peer PG against the XON rule with the switch's descriptors), releasing the hold
changes nothing: each member stays paused by its peer's XOFF (refreshed every half pause time
while the PG stays above XON), none can send the first frame that would lower a peer PG, so none
ever does. If a peer PG fell below XON in the drain, the hold is released and the fabric filled
again (at most three times; docs/testing.md gives how often the runs measured needed it).

`rocesw show pfc --deadlock --json` must then report exactly the cycle the routes allow,
computed here by walking the zone's config files (tests/py/test_deadlock.py's walk, independent
of rocesw): its members in wait order, each paused (SONiC's default PFC watchdog is turned off
in the copy: it would break the cycle after 200 ms), the cycle still there on a second look.
Then the zone is reloaded with the PFC watchdog (action drop, 1 ms) on every port of every switch,
as config/zone-deadlock/pfcwd has it: the cycle breaks, nothing stays queued, a member queue
stormed, the watchdog's TX drop counters add up to the switches' pfcwd_drop, and the only other
lossless loss is the headroom loss SONiC's restoration implies (docs/control.md): frames lost
only at PGs fed by a queue the watchdog restored, at most a refresh gap's worth of frames per
restoration. Every wait is on the control socket."""
import json
import os
import shutil
import socket
import subprocess
import sys
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

from common import ROCESW, ROOT, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import Control, wait_in_file, wait_until  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402
from test_deadlock import ALL, FAIL, cycles, host_ip, rotations, turns  # noqa: E402

LAB = os.path.join(ROOT, "scripts", "lab.py")
ZONES = os.path.join(ROOT, "config", "zone-deadlock")
SLOW = 10  # Mb/s of every switch-to-switch link in the test's copy
FRAME_LEN = 14 + 20 + 8 + 1000  # the senders' frames: Ethernet, IPv4, UDP, payload
# a hang guard for the fill (about 12 s here), longer under ThreadSanitizer's slowdown
FILL_GUARD = 360 if os.environ.get("ROCESW_TSAN") else 120

SENDER = """
import socket, sys
from scapy.utils import rdpcap
frames = [bytes(f) for f in rdpcap(sys.argv[1])]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
print("ready", flush=True)
i = 0
while True:
    try:
        s.send(frames[i % len(frames)])
    except OSError:
        pass
    i += 1
"""


def slow_copy(variant, out, down=(), no_watchdog=False):
    """The variant's zone with its switch-to-switch links (and their ports) at SLOW Mb/s, the
    ports in down (and their peers) admin down; no_watchdog: SONiC's default PFC watchdog (on the
    lossless queues, drop after 200 ms) off, as `pfcwd_sw_enable: ""` turns it off."""
    src = os.path.join(ZONES, variant)
    with open(os.path.join(src, "zone.yaml")) as f:
        z = yaml.safe_load(f)
    fabric, down = set(), set(down)
    for l in z["LINK"]:
        if l["a"] in down or l["b"] in down:
            down.update((l["a"], l["b"]))
    for l in z["LINK"]:
        if "|" in l["a"] and "|" in l["b"]:
            l["speed"] = SLOW
            fabric.update((l["a"], l["b"]))
    for name, s in z["SWITCH"].items():
        with open(os.path.join(src, s["config"])) as f:
            cfg = yaml.safe_load(f)
        for port, p in cfg["PORT"].items():
            if f"{name}|{port}" in fabric:
                p["speed"] = SLOW
            if f"{name}|{port}" in down:
                p["admin_status"] = "down"
            if no_watchdog:
                cfg["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] = ""
        with open(os.path.join(out, s["config"]), "w") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
    with open(os.path.join(out, "zone.yaml"), "w") as f:
        yaml.safe_dump(z, f, sort_keys=False)
    return os.path.join(out, "zone.yaml")


def frames_of(cfg, sw, z, host):
    """host's frames to every host of another rack: DSCP 3, UDP to 4791, 8 source ports each."""
    link = next(l for l in z["LINK"] if host in (l["a"], l["b"]))
    port = (link["b"] if link["a"] == host else link["a"]).split("|")[1]
    mine = host_ip(host)
    mac = next(v["neigh"] for k, v in cfg[sw]["NEIGH"].items() if k.endswith("|" + mine))
    router = cfg[sw]["PORT"][port].get("mac") or cfg[sw]["DEVICE_METADATA"]["localhost"]["mac"]
    rack = {h: next(l["b"] if l["a"] == h else l["a"] for l in z["LINK"] if h in (l["a"], l["b"]))
            .split("|")[0] for h in ALL}
    out = []
    for dst in ALL:
        if rack[dst] == rack[host]:
            continue
        for sport in range(49152, 49160):
            out.append(Ether(src=mac, dst=router) / IP(src=mine, dst=host_ip(dst), tos=3 << 2) /
                       UDP(sport=sport, dport=4791) / bytes(1000))
    return out, rack


class LiveDeadlock(unittest.TestCase):
    def setUp(self):
        require_root()
        self.d = tmpdir()
        self.zone = slow_copy("bounce", self.d, no_watchdog=True)
        self.wd_dir = os.path.join(self.d, "pfcwd")
        os.makedirs(self.wd_dir)
        slow_copy("pfcwd", self.wd_dir, FAIL)  # a reload keeps the failed links down
        edges, _ = turns("bounce", ALL)
        self.expected = cycles(edges)
        with open(self.zone) as f:
            self.z = yaml.safe_load(f)
        self.peer = {}
        for l in self.z["LINK"]:
            self.peer[l["a"]], self.peer[l["b"]] = l["b"], l["a"]
        self.cfg = {}
        for name, s in self.z["SWITCH"].items():
            with open(os.path.join(self.d, s["config"])) as f:
                self.cfg[name] = yaml.safe_load(f)

    def deadlocks(self):
        r = subprocess.run([ROCESW, "show", "pfc", "--deadlock", "--json", "--socket", self.sock],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def reload_zone(self, d):
        """A zone-wide reload (docs/control.md) with every switch's config of directory d."""
        names = list(self.z["SWITCH"])
        files = [open(os.path.join(d, self.z["SWITCH"][n]["config"]), "rb") for n in names]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.settimeout(60)
            s.connect(self.sock)
            req = {"v": 1, "op": "reload", "switches": names, "files": [f.name for f in files]}
            socket.send_fds(s, [json.dumps(req).encode()], [f.fileno() for f in files])
            return json.loads(s.recv(1 << 20))
        finally:
            s.close()
            for f in files:
                f.close()

    def queued(self, ctl):
        return sum(s["conservation"]["queued"] for s in ctl.counters()["switches"])

    def start_senders(self):
        senders = []
        for h in ALL:
            sw = next(l["b"] if l["a"] == h else l["a"] for l in self.z["LINK"]
                      if h in (l["a"], l["b"])).split("|")[0]
            frames, _ = frames_of(self.cfg, sw, self.z, h)
            pcap = os.path.join(self.d, f"{h}.pcap")
            wrpcap(pcap, frames)
            p = subprocess.Popen(["ip", "netns", "exec", h, "/usr/bin/python3", "-c", SENDER,
                                  pcap], stdout=subprocess.PIPE, text=True)
            senders.append(p)
            self.assertEqual(p.stdout.readline().strip(), "ready")
        return senders

    def stop_senders(self):
        for p in self.senders:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
        self.senders = []

    def storm(self, on):
        """Holds (on) or releases the cycle's member queues (priority 3) with an injected PFC
        storm: while it lasts they are paused as if their peers kept sending XOFF."""
        for m in self.expected[0]:
            r = subprocess.run([ROCESW, "set", "pfc-storm", m, "3", on, "--socket", self.sock],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)

    def restored(self, c, port):
        """Watchdog restorations of SWITCH|PORT's queue 3 in counters c."""
        sw, name = port.split("|")
        s = next(x for x in c["switches"] if x["name"] == sw)
        p = next(x for x in s["ports"] if x["name"] == name)
        return p["queues"][3]["PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"]

    def quiescent(self, ctl):
        """Nothing left that can move: no frame on a link, and every queue holding frames
        paused (the cycle's by the hold, the others by PFC from a PG stuck behind them)."""
        c = ctl.counters()
        if c["in_flight"]:
            return False
        return all(q["paused"] for s in c["switches"] for p in s["ports"]
                   for q in p.get("queues", []) if q["SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES"])

    def margins(self, ctl):
        """Each member's peer PG in the frozen state, against docs/tm.md's XON rule for a PG of
        dynamic_th 0 ("Packets as well as bytes"): XON needs fewer packets than the free
        descriptors less ceil(xon_offset / 84 B), xon_offset = 2 x MTU (docs/config.md), and
        an empty headroom. Every peer must be short of that (XOFF kept)."""
        for m in self.expected[0]:
            sw, port = m.split("|")
            far = next(l["b"] if l["a"] == m else l["a"] for l in self.z["LINK"]
                       if m in (l["a"], l["b"]))
            psw, pport = far.split("|")
            b = ctl.request({"v": 1, "op": "show", "what": "buffers", "switch": psw})["result"]
            pg = next(g for p in b["ports"] if p["name"] == pport
                      for g in p["priority_groups"] if g["pg"] == 3)
            desc = b["descriptors"]
            mtu = int(self.cfg[psw]["PORT"][pport]["mtu"])
            xon_below = desc["size"] - desc["used"] - -(-2 * mtu // 84)
            hdrm = pg["SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_CURR_OCCUPANCY_BYTES"]
            sys.stderr.write(f"{m} held; its peer {far} PG3: {pg['curr_packets']} packets "
                             f"(XON below {xon_below}: descriptors {desc['used']} of "
                             f"{desc['size']} used), {hdrm} B in headroom, xoff {pg['xoff']}\n")
            self.assertTrue(pg["xoff"], far)
            self.assertTrue(hdrm > 0 or pg["curr_packets"] >= xon_below, (far, pg, desc))

    def test_deadlock_found_then_broken_by_the_watchdog(self):
        self.assertEqual(len(self.expected), 1)
        self.sock = os.path.join(self.d, "ctl.sock")
        r = subprocess.run([LAB, "up", self.zone], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        dp, self.senders = None, []
        try:
            log = open(os.path.join(self.d, "dataplane.log"), "w")
            dp = subprocess.Popen(dataplane_cmd("rswdl", "--zone", self.zone, "--control-socket",
                                                self.sock, mem=2048),
                                  stdout=subprocess.DEVNULL, stderr=log)
            log.close()
            wait_in_file(os.path.join(self.d, "dataplane.log"), "forwarding", timeout=120)
            ctl = Control(self.sock)
            for f in FAIL:
                r = subprocess.run([ROCESW, "set", "port", f, "down", "--socket", self.sock],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            # nothing paused yet: no cycle
            self.assertEqual(self.deadlocks()["deadlocks"], [])
            for attempt in range(1, 4):
                self.senders = self.start_senders()
                # the fabric fills until the cycle's queues are paused, their peers' PGs over
                # XOFF
                wait_until(lambda: self.deadlocks()["deadlocks"], "a PFC deadlock",
                           timeout=FILL_GUARD, every=0.2)
                # hold the cycle's queues (an injected storm), stop the senders and wait until
                # everything that can drain has: the state is then frozen
                self.storm("on")
                self.stop_senders()
                wait_until(lambda: self.quiescent(ctl), "every queue holding frames paused",
                           every=0.2)
                if self.deadlocks()["deadlocks"]:
                    break
                # a member's peer PG fell below XON in the drain: no lasting cycle; fill again
                sys.stderr.write(f"attempt {attempt}: no cycle once drained, filling again\n")
                self.storm("off")
            else:
                self.fail("no cycle held in the frozen state in 3 attempts")
            self.margins(ctl)
            # every member's peer PG is over XOFF with nothing left to drain: once the hold ends,
            # the peers' XOFF keeps every member paused, so nothing moves again
            self.storm("off")
            # with the senders gone and the hold released, the cycle's own PFC keeps it
            got = wait_until(lambda: (lambda r: len(r["deadlocks"]) == 1 and r)(self.deadlocks()),
                             "one cycle once the senders stopped", every=0.2)
            d = got["deadlocks"][0]
            members = [f"{m['switch']}|{m['port']}" for m in d["cycle"]]
            self.assertIn(tuple(members), rotations(list(self.expected[0])))
            self.assertEqual({m["priority"] for m in d["cycle"]}, {3})
            for i, m in enumerate(d["cycle"]):
                nxt = d["cycle"][(i + 1) % len(d["cycle"])]
                self.assertEqual(m["peer_switch"], nxt["switch"], "each waits on the next")
                self.assertGreater(m["queued_frames"], 0)
                self.assertGreater(m["queued_bytes"], 0)
                self.assertEqual(m["pfcwd"]["action"], "off")
                self.assertEqual(m["pfcwd"]["status"], "off")
            # still held on a later look, for longer
            again = wait_until(lambda: (lambda r: r["deadlocks"] and
                                        r["deadlocks"][0]["held_us"] > d["held_us"] and r)(
                self.deadlocks()), "the cycle held on a second look", every=0.2)
            self.assertEqual([f"{m['switch']}|{m['port']}" for m in again["deadlocks"][0]["cycle"]],
                             members)
            # the table prints the cycle in order
            r = subprocess.run([ROCESW, "show", "pfc", "--deadlock", "--socket", self.sock],
                               capture_output=True, text=True)
            self.assertIn("Deadlock 1: 4 queues", r.stdout)
            sys.stderr.write(r.stdout)
            rows = [l.split()[1] for l in r.stdout.splitlines() if l.split()[:1] in
                    (["1"], ["2"], ["3"], ["4"])]
            self.assertEqual(rows, [m + ":3" for m in members])
            c0 = ctl.counters()
            pfcwd0 = sum(s["drops"].get("pfcwd_drop", 0) for s in c0["switches"])
            # the watchdog (drop, 1 ms) on every port: it breaks the cycle
            r = self.reload_zone(self.wd_dir)
            self.assertTrue(r.get("ok"), r)
            wait_until(lambda: not self.deadlocks()["deadlocks"] and self.queued(ctl) == 0,
                       "the watchdog to break the cycle and the fabric to drain", every=0.2)
            c1 = ctl.counters()

            def grew(key):
                """What each reason of the switches' `key` counted since c0, summed."""
                out = {}
                for s0, s1 in zip(c0["switches"], c1["switches"]):
                    a, b = (key(s0), key(s1))
                    for k, v in b.items():
                        if v - a.get(k, 0):
                            out[k] = out.get(k, 0) + v - a.get(k, 0)
                return out

            drops = grew(lambda s: s["drops"])
            lossless = grew(lambda s: s["conservation"]["lossless_drops"])
            self.assertIn("pfcwd_drop", lossless)
            self.assertLessEqual(set(lossless), {"pfcwd_drop", "headroom_overflow"}, lossless)
            # The headroom's loss (docs/control.md, "show pfc --deadlock"): a queue the
            # watchdog restored honours PFC again, but its pause was dropped when the storm was
            # detected, so it sends until its peer's next XOFF refresh, at most half a pause
            # time later (0xFFFF quanta of 512 bit times: 1.68 s at 10 Mb/s), while the peer's
            # PG still has XOFF in force: past the headroom's bytes each frame is lost. So the
            # PGs that lost frames are exactly PGs fed by a restored queue, each at most what
            # its link carries in a refresh gap per restoration.
            refresh_s = 0xFFFF * 512 / (SLOW * 1e6) / 2
            gap_frames = int(refresh_s * SLOW * 1e6 / (FRAME_LEN * 8)) + 1
            overflow = 0
            for s0, s1 in zip(c0["switches"], c1["switches"]):
                for p0, p1 in zip(s0["ports"], s1["ports"]):
                    k = "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS"
                    n = p1["priority_groups"][3][k] - p0["priority_groups"][3][k] \
                        if "priority_groups" in p1 else 0
                    if not n:
                        continue
                    overflow += n
                    far = self.peer[f"{s1['name']}|{p1['name']}"]
                    self.assertIn("|", far, "a PG fed by a host lost frames")
                    restored = self.restored(c1, far) - self.restored(c0, far)
                    sys.stderr.write(f"PG {s1['name']}|{p1['name']}:3 lost {n} frames; its "
                                     f"feeder {far} was restored {restored} times (at most "
                                     f"{gap_frames} frames a gap)\n")
                    self.assertGreaterEqual(restored, 1, far)
                    self.assertLessEqual(n, restored * gap_frames)
            self.assertEqual(overflow, lossless.get("headroom_overflow", 0))
            sys.stderr.write(f"lossless drops after the watchdog came: {lossless}\n")
            self.assertIn("pfcwd_drop", drops)
            wd_tx = 0
            stormed = set()
            for s in c1["switches"]:
                for p in s["ports"]:
                    for q in p.get("queues", []):
                        n = q.get("PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS", 0)
                        wd_tx += n
                        if q.get("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", 0):
                            stormed.add((s["name"], p["name"], q["queue"]))
            self.assertEqual(wd_tx, sum(s["drops"].get("pfcwd_drop", 0)
                                        for s in c1["switches"]) - pfcwd0)
            # the watchdog broke it at a switch of the cycle: a member's pause is held by its
            # peer's ingress PG, whose frames wait in that peer's egress queues, so a queue
            # flushed there (the member's or another one: which is detected first depends on
            # when each was paused) drains the PG; a flush at any other switch cannot
            want = {m["switch"] for m in d["cycle"]}
            self.assertTrue({sw for sw, _, _ in stormed} & want, (want, stormed))
        finally:
            self.stop_senders()
            if dp:
                dp.terminate()
                try:
                    dp.wait(60)
                except subprocess.TimeoutExpired:
                    dp.kill()
                    dp.wait()
            subprocess.run([LAB, "down", self.zone], capture_output=True)
            shutil.rmtree(self.d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
