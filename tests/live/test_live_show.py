"""`rocesw show` prints the tables SONiC users know, zeros included, and their cells are the
dataplane's counters: a switch on pcap ports (no namespaces) forwards N RoCEv2 frames from a host
to 4 ECMP uplinks sprayed per packet by ARS; the text tables of
`show queues|pfc|watchdog|buffers|ecmp|ars|counters|ports` are parsed back and compared with
`--json`, with N and with the shapes SONiC prints (a row per queue, a column per priority)."""
import json
import os
import re
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import ROCESW, dataplane_cmd, tmpdir, write_pcap  # noqa: E402
from labnet import HOST_MAC, ROUTER_MAC, wait_for_line  # noqa: E402

N_FRAMES = 64
UPLINKS = ["Ethernet8", "Ethernet16", "Ethernet24", "Ethernet32"]


def config(d):
    ports = [f'  Ethernet0: {{speed: 10000, role: host, devargs: "net_pcap0,rx_pcap={d}/in.pcap,'
             f'tx_pcap={d}/Ethernet0.pcap"}}']
    for i, name in enumerate(UPLINKS):
        ports.append(f'  {name}: {{speed: 25000, role: uplink, devargs: "net_pcap{i + 1},'
                     f'rx_pcap={d}/empty.pcap,tx_pcap={d}/{name}.pcap"}}')
    neigh = "\n".join(f'  "{n}|10.255.0.{2 * i + 1}": {{neigh: "02:00:00:00:20:0{i}"}}'
                      for i, n in enumerate(UPLINKS))
    return f"""DEVICE_METADATA:
  localhost: {{hostname: show-test, mac: "{ROUTER_MAC}"}}
PORT:
{chr(10).join(ports)}
NEIGH:
  "Ethernet0|10.1.0.1": {{neigh: "{HOST_MAC}"}}
{neigh}
ARS_PROFILE:
  default: {{random_seed: 5}}
ARS_OBJECT:
  spray: {{assign_mode: per_packet_random, match_l4_dst_port: 4791}}
NEXTHOP_GROUP:
  uplinks: {{nexthop: "10.255.0.1,10.255.0.3,10.255.0.5,10.255.0.7", ars_object: spray}}
STATIC_ROUTE:
  "10.1.0.0/24": {{nexthop: 10.1.0.1}}
  "10.2.0.0/16": {{nexthop_group: uplinks}}
"""


def table(text):
    """Rows of the first SONiC-style table in text (header, dashed rule, rows): a list of dicts.
    Every cell lies within its column's dashes."""
    lines = text.splitlines()
    for i in range(1, len(lines)):
        if re.fullmatch(r"-+( +-+)*", lines[i]):
            spans = [m.span() for m in re.finditer(r"-+", lines[i])]
            cut = lambda line: [line[a:b].strip() for a, b in spans]
            head = cut(lines[i - 1])
            rows = []
            for line in lines[i + 1:]:
                if not line.strip():
                    break
                rows.append(dict(zip(head, cut(line))))
            return rows
    raise AssertionError(f"no table in:\n{text}")


def tables(text):
    """Every table in text, in order (blocks separated by blank lines)."""
    return [table(b) for b in text.split("\n\n") if re.search(r"^-+( +-+)*$", b, re.M)]


class LiveShow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tmpdir()
        frames = [rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152, dqp=0x100 + i,
                               psn=i, smac=HOST_MAC, dmac=ROUTER_MAC, payload=bytes(100))
                  for i in range(N_FRAMES)]
        write_pcap(os.path.join(cls.dir, "in.pcap"), frames)
        write_pcap(os.path.join(cls.dir, "empty.pcap"), [])
        cfg = os.path.join(cls.dir, "sw.yaml")
        with open(cfg, "w") as f:
            f.write(config(cls.dir))
        cls.sock = os.path.join(cls.dir, "dp.sock")
        cls.dp = subprocess.Popen(dataplane_cmd("rsw-show-test", "--config", cfg,
                                                "--control-socket", cls.sock, mem=512),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_line(cls.dp.stderr, "forwarding")
        # the capture is read once; wait until every frame has left (counters, not time)
        deadline = time.monotonic() + 120
        while True:
            c = cls.show_json("counters")
            tx = sum(p["tx_packets"] for p in c["ports"] if p["name"] in UPLINKS)
            if tx == N_FRAMES and c["conservation"]["holds"]:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{tx} of {N_FRAMES} frames forwarded: {c}")
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.dp.terminate()
        cls.dp.wait(60)
        cls.dp.stdout.close()
        cls.dp.stderr.close()

    @classmethod
    def show_json(cls, what):
        r = subprocess.run([ROCESW, "show", what, "--json", "--socket", cls.sock],
                           capture_output=True, text=True, check=True)
        return json.loads(r.stdout)

    def show(self, what):
        r = subprocess.run([ROCESW, "show", what, "--socket", self.sock], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_queue_counters(self):
        rows = table(self.show("queues"))
        self.assertEqual(len(rows), 5 * 8, "a row per queue of every port, zeros included")
        self.assertEqual([r["TxQ"] for r in rows[:8]], [f"UC{q}" for q in range(8)])
        js = {(p["name"], q["queue"]): q for p in self.show_json("queues") for q in p["queues"]}
        for r in rows:
            q = js[(r["Port"], int(r["TxQ"][2:]))]
            self.assertEqual(int(r["Counter/pkts"]), q["SAI_QUEUE_STAT_PACKETS"])
            self.assertEqual(int(r["Counter/bytes"]), q["SAI_QUEUE_STAT_BYTES"])
            self.assertEqual(int(r["Drop/pkts"]), q["SAI_QUEUE_STAT_DROPPED_PACKETS"])
        self.assertEqual(sum(int(r["Counter/pkts"]) for r in rows if r["Port"] in UPLINKS),
                         N_FRAMES)

    def test_pfc_counters_all_zero_shown(self):
        rx, tx = tables(self.show("pfc"))
        for t, first in ((rx, "Port Rx"), (tx, "Port Tx")):
            self.assertEqual([r[first] for r in t], ["Ethernet0"] + UPLINKS)
            for r in t:
                self.assertEqual([r[f"PFC{i}"] for i in range(8)], ["0"] * 8)

    def test_watchdog_rows(self):
        rows = table(self.show("watchdog"))
        self.assertEqual(len(rows), 5 * 8)
        self.assertEqual(rows[3]["QUEUE"], "Ethernet0:3")
        self.assertTrue(all(r["STATUS"] == "operational" and
                            r["STORM DETECTED/RESTORED"] == "0/0" for r in rows))

    def test_buffers(self):
        pools, wm, drops = tables(self.show("buffers"))
        js = self.show_json("buffers")
        self.assertEqual([r["Pool"] for r in pools], [p["name"] for p in js["pools"]])
        self.assertEqual([int(r["Size"]) for r in pools], [p["size"] for p in js["pools"]])
        self.assertEqual(len(wm), 5)
        self.assertEqual([r["Port"] for r in drops], ["Ethernet0"] + UPLINKS)

    def test_ecmp_members(self):
        text = self.show("ecmp")
        self.assertIn("Group uplinks:", text)
        rows = table(text)
        self.assertEqual([r["Port"] for r in rows], UPLINKS)
        self.assertEqual(sum(int(r["Packets"]) for r in rows), N_FRAMES)

    def test_ars_counters(self):
        """Every one of the N RoCE frames is ARS's to decide; none dropped; the table's cells are
        the SAI counters of --json and of the counters' ECMP group."""
        rows = table(self.show("ars"))
        self.assertEqual([(r["Group"], r["Object"], r["Mode"]) for r in rows],
                         [("uplinks", "spray", "per_packet_random")])
        r = rows[0]
        self.assertEqual((int(r["Packets"]), int(r["Drops"]), int(r["Table full"])),
                         (N_FRAMES, 0, 0))
        self.assertEqual((int(r["Idle/us"]), int(r["Flows"])), (256, 512))  # SONiC's defaults
        js = self.show_json("ars")[0]
        self.assertEqual(int(r["NH reassign"]),
                         js["SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS"])
        self.assertEqual(int(r["Port reassign"]),
                         js["SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS"])
        self.assertEqual(self.show_json("counters")["ecmp_groups"][0]["ars"]["RSW_ARS_PACKETS"],
                         N_FRAMES)

    def test_explain_ars_changes_nothing(self):
        """hash_explain on the live tables shows the ARS step (a random mode: the group's seeded
        draw among the 4 uplinks) and changes no ARS state: the counters stay, and asking
        twice draws the same member (the tie-break stream did not move)."""
        before = self.show_json("ars")[0]
        cmd = [ROCESW, "hash", "explain", "--src", "10.1.0.1", "--dst", "10.2.0.1", "--qp",
               "0x100", "--in-port", "Ethernet0", "--socket", self.sock, "--json"]
        answers = []
        for _ in range(2):
            r = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            answers.append(json.loads(r.stdout))
        a = answers[0]["ars"]
        self.assertEqual((a["object"], a["mode"], a["reason"]),
                         ("spray", "per_packet_random", "random"))
        self.assertEqual([c["port"] for c in a["candidates"]], UPLINKS)
        self.assertEqual(answers[0]["egress_port"], UPLINKS[a["member"]])
        self.assertEqual(answers[1]["ars"]["member"], a["member"])
        self.assertEqual(self.show_json("ars")[0], before)

    def test_counters_and_ports(self):
        text = self.show("counters")
        ports = table(text)
        self.assertEqual(int(ports[0]["RX_OK"]), N_FRAMES)
        self.assertEqual(sum(int(r["TX_OK"]) for r in ports), N_FRAMES)
        self.assertIn("No drops.", text)
        self.assertIn(f"received {N_FRAMES} = transmitted {N_FRAMES} + dropped 0", text)
        routes = table(self.show("routes"))
        self.assertEqual([(r["Prefix"], r["Next hop"]) for r in routes],
                         [("10.1.0.0/24", "10.1.0.1"), ("10.2.0.0/16", "group uplinks")])
        rows = table(self.show("ports"))
        self.assertEqual([r["Speed"] for r in rows], ["10G"] + ["25G"] * 4)


if __name__ == "__main__":
    unittest.main()
