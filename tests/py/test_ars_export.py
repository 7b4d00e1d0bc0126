"""`rocesw hash export` carries a switch config's ARS settings (docs/ars.md "Export"):
- sonic: the tables of SONiC's sonic-ars YANG model (ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES,
  ARS_NEXTHOPS), read back here as JSON: only leaves the model declares, keys of the model's
  shape, every value the config's (read from the YAML here, not from rocesw);
- what SONiC cannot hold is refused with the reason (a random or fixed mode, an idle time
  outside 2..2047 us, a load threshold above uint16), what it has no field for is named on
  stderr, and --no-ars exports the hash policy alone;
- eos: comment lines only (no DLB command is claimed), parsed back and checked."""
import json
import os
import re
import subprocess
import unittest

import yaml

from common import ROCESW, tmpdir

# leaves of sonic-ars's lists (SONiC Local ARS design, YANG module sonic-ars)
PROFILE_LEAVES = {"algorithm", "ars_nhg_path_selector_mode", "ars_lag_path_selector_mode",
                  "default_ars_object", "max_flows", "sampling_interval", "past_load_min_value",
                  "past_load_max_value", "past_load_weight", "future_load_min_value",
                  "future_load_max_value", "future_load_weight", "current_load_min_value",
                  "current_load_max_value", "ipv4_enable", "ipv6_enable"}
OBJECT_LEAVES = {"assign_mode", "flowlet_idle_time", "max_flows", "primary_path_threshold",
                 "alternative_path_cost"}

BASE = """DEVICE_METADATA:
  localhost: {hostname: t, mac: "02:00:00:00:01:00"}
PORT:
  Ethernet0: {speed: 100000}
  Ethernet8: {speed: 100000}
  Ethernet16: {speed: 100000}
  Ethernet24: {speed: 100000}
NEIGH:
  "Ethernet8|10.255.0.1": {neigh: "02:00:00:00:10:01"}
  "Ethernet16|10.255.0.3": {neigh: "02:00:00:00:10:03"}
  "Ethernet24|10.255.0.5": {neigh: "02:00:00:00:10:05"}
HASH_POLICY:
  dest_qp:
    algorithm: CRC_CCITT
    udf:
      - {base: L4, offset: 13, length: 3, mask: "0xffffff",
         match: {ip_protocol: 17, l4_dst_port: 4791}}
ARS_PROFILE:
  prof: {sampling_interval: 12, past_load_min_value: 100, past_load_max_value: 60000,
         past_load_weight: 3, future_load_min_value: 200, future_load_max_value: 50000,
         future_load_weight: 4, port_load_weight: 70, port_queue_weight: 30, random_seed: 5,
         ipv6_enable: false}
ARS_OBJECT:
  roce: {assign_mode: MODE, flowlet_idle_time: IDLE, max_flows: 1024,
         match_l4_dst_port: 4791}
NEXTHOP_GROUP:
  up: {nexthop: "10.255.0.1,10.255.0.3", ars_object: roce}
  plain: {nexthop: "10.255.0.5"}
STATIC_ROUTE:
  "10.9.0.0/16": {nexthop_group: up}
  "10.8.0.0/16": {nexthop_group: plain}
"""


class ArsExport(unittest.TestCase):
    def config(self, mode="per_flowlet_quality", idle=300, **replace):
        text = BASE.replace("MODE", mode).replace("IDLE", str(idle))
        for k, v in replace.items():
            text = text.replace(k, v)
        path = os.path.join(tmpdir(), "switch.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path, yaml.safe_load(text)

    def export(self, path, fmt, *extra):
        return subprocess.run([ROCESW, "hash", "export", "--format", fmt, "--policy", path,
                               *extra], capture_output=True, text=True)

    def test_sonic_tables(self):
        path, cfg = self.config()
        r = self.export(path, "sonic")
        self.assertEqual(r.returncode, 0, r.stderr)
        db = json.loads(r.stdout)
        self.assertEqual(db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"], ["RDMA_BTH_DEST_QP"])
        prof = cfg["ARS_PROFILE"]["prof"]
        p = db["ARS_PROFILE"]["prof"]
        self.assertLessEqual(set(p), PROFILE_LEAVES)
        for k in ("sampling_interval", "past_load_min_value", "past_load_max_value",
                  "past_load_weight", "future_load_min_value", "future_load_max_value",
                  "future_load_weight"):
            self.assertEqual(p[k], str(prof[k]), k)
        self.assertEqual((p["algorithm"], p["ipv4_enable"], p["ipv6_enable"]),
                         ("ewma", "true", "false"))
        self.assertEqual(p["ars_nhg_path_selector_mode"], "nexthop")
        obj = cfg["ARS_OBJECT"]["roce"]
        o = db["ARS_OBJECT"]["roce"]
        self.assertLessEqual(set(o), OBJECT_LEAVES)
        self.assertEqual(o, {"assign_mode": obj["assign_mode"],
                             "flowlet_idle_time": str(obj["flowlet_idle_time"]),
                             "max_flows": str(obj["max_flows"])})
        # the group's next hops and their ports (NEIGH), and nothing of the plain group
        members = cfg["NEXTHOP_GROUP"]["up"]["nexthop"].split(",")
        ports = {k.split("|")[1]: k.split("|")[0] for k in cfg["NEIGH"]}
        self.assertEqual(db["ARS_NEXTHOPS"], {f"default|{ip}": {"ars_obj_name": "roce"}
                                              for ip in members})
        self.assertEqual(db["ARS_INTERFACES"], {ports[ip]: {"ars_obj_name": "roce"}
                                                for ip in members})
        for key in db["ARS_NEXTHOPS"]:
            self.assertRegex(key, r"^default\|\d+\.\d+\.\d+\.\d+$", "key vrf_name|nexthop_ip")
        # settings SONiC has no field for are named, not dropped silently
        self.assertIn("port_load_weight 70", r.stderr)
        self.assertIn("random_seed 5", r.stderr)
        self.assertIn("match_l4_dst_port 4791", r.stderr)

    def test_per_packet_quality(self):
        path, _ = self.config(mode="per_packet_quality")
        r = self.export(path, "sonic")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["ARS_OBJECT"]["roce"]["assign_mode"],
                         "per_packet_quality")

    def test_refused(self):
        for kw, word in ((dict(mode="per_packet_random"), "assign_mode per_packet_random"),
                         (dict(mode="fixed"), "assign_mode fixed"),
                         (dict(idle=5000), "flowlet_idle_time 5000"),
                         ({"past_load_max_value: 60000": "past_load_max_value: 200000"},
                          "past_load_max_value 200000")):
            mode = kw.pop("mode", "per_flowlet_quality")
            idle = kw.pop("idle", 300)
            path, _ = self.config(mode=mode, idle=idle, **kw)
            r = self.export(path, "sonic")
            self.assertEqual(r.returncode, 1, word)
            self.assertEqual(r.stdout, "", "nothing half-written")
            self.assertIn(word, r.stderr)
            r = self.export(path, "sonic", "--no-ars")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(list(json.loads(r.stdout)), ["SWITCH_HASH"])

    def test_eos_comments(self):
        path, cfg = self.config()
        r = self.export(path, "eos")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        body = [ln for ln in lines if not ln.startswith("!")]
        self.assertEqual(body[0], "load-balance policies", "the hash profile is unchanged")
        ars = [ln for ln in lines if ln.startswith("! ars ")]
        m = re.fullmatch(r"! ars group (\S+) object (\S+) mode (\S+) idle_time_us (\d+) "
                         r"max_flows (\d+) udp_dst_port (\d+) members (.*)", ars[-1])
        self.assertIsNotNone(m, ars)
        obj = cfg["ARS_OBJECT"]["roce"]
        self.assertEqual(m.groups(), ("up", "roce", obj["assign_mode"],
                                      str(obj["flowlet_idle_time"]), str(obj["max_flows"]),
                                      str(obj["match_l4_dst_port"]), "Ethernet8 Ethernet16"))
        self.assertTrue(any("No DLB command" in ln for ln in lines))


if __name__ == "__main__":
    unittest.main(verbosity=1)
