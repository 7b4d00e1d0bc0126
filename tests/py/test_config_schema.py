"""The config schema and SONiC config_db.json files.

- docs/config.md's table reference is what `rocesw check-config --schema-markdown` prints (the
  schema the compiler checks against), so the docs cannot drift from the code;
- SONiC's public sample config_db.json files (tests/sonic/README.md) load with warnings only, the
  port count being the file's own;
- what SONiC has and rocesw does not model is an error in a rocesw file, a warning in a SONiC one;
- VRF-prefixed STATIC_ROUTE keys, ecmp_hash_ipv4_rdma, a next hop named twice, a SONiC SWITCH
  table (not a zone)."""
import json
import os
import subprocess
import unittest

from common import ROCESW, ROOT, tmpdir

SONIC = os.path.join(ROOT, "tests", "sonic")


def check(path, *opts):
    return subprocess.run([ROCESW, "check-config", *opts, path], capture_output=True, text=True,
                          timeout=60)


class Schema(unittest.TestCase):
    def test_docs_match_schema(self):
        with open(os.path.join(ROOT, "docs", "config.md")) as fh:
            doc = fh.read()
        begin = doc.index("-->\n", doc.index("<!-- schema:begin")) + 4
        end = doc.index("<!-- schema:end -->")
        r = subprocess.run([ROCESW, "check-config", "--schema-markdown"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(doc[begin:end], r.stdout,
                         "docs/config.md differs from the schema: paste the output of "
                         "`rocesw check-config --schema-markdown` between its schema markers")

    def test_help(self):
        r = subprocess.run([ROCESW, "check-config", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("--sonic", r.stdout)
        self.assertIn("--schema-markdown", r.stdout)


class Sonic(unittest.TestCase):
    def assert_warnings_only(self, path, n_ports, *opts):
        r = check(path, *opts)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{path}: ok: {n_ports} ports,", r.stdout)
        lines = [l for l in r.stderr.splitlines() if l]
        self.assertTrue(lines, "a SONiC file with tables rocesw does not model warns")
        for l in lines:
            self.assertRegex(l, r"^.*:\d+: warning: ")
        # each warning once
        self.assertEqual(len(lines), len(set(l.split(": warning: ")[1] for l in lines)))
        return lines

    def test_sample_configs_load_with_warnings_only(self):
        for name in ("config_db_t0.json", "config_db_t1.json"):
            path = os.path.join(SONIC, name)
            with open(path) as fh:
                n_ports = len(json.load(fh)["PORT"])
            with self.subTest(name=name):
                lines = self.assert_warnings_only(path, n_ports)
                self.assertTrue(any("table BGP_NEIGHBOR ignored" in l for l in lines))

    def test_t0_with_rdma_qos(self):
        """The T0 sample with the QoS and buffers sonic-cfggen renders for it, merged as
        sonic-cfggen merges -j files."""
        with open(os.path.join(SONIC, "config_db_t0.json")) as fh:
            db = json.load(fh)
        for part in ("qos-arista7050.json", "buffer-arista7060-t0.json"):
            with open(os.path.join(SONIC, part)) as fh:
                for table, entries in json.load(fh).items():
                    db.setdefault(table, {}).update(entries)
        for table in ("BUFFER_PG", "BUFFER_PROFILE", "PORT_QOS_MAP", "WRED_PROFILE",
                      "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "SCHEDULER", "QUEUE"):
            self.assertIn(table, db)
        d = tmpdir()
        path = os.path.join(d, "config_db.json")
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        lines = self.assert_warnings_only(path, len(db["PORT"]))
        # the pool's shared headroom pool (xoff) is modelled: no buffer field is left out
        self.assertFalse(any("BUFFER_" in l for l in lines), lines)

    def test_vendor_buffer_profiles_load(self):
        """config_db.json files with SONiC's Broadcom (TH3 and TD3, sonic-mgmt's settings) and
        Mellanox profiles load with warnings only, each read by its platform's convention
        (tests/unit/test_buffer_convention.c checks what they compile to); the TH3 file
        without DEVICE_METADATA buffer_convention or platform is read as Mellanox, where its
        profile (size 1270 < xoff 190500, no shared headroom pool) is refused naming the
        convention and its rule, and loads again once buffer_convention says broadcom."""
        d = os.path.join(ROOT, "tests", "configs", "buffers")
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            with open(path) as fh:
                n_ports = len(json.load(fh)["PORT"])
            with self.subTest(name=name):
                self.assert_warnings_only(path, n_ports)
        with open(os.path.join(d, "broadcom-th3.json")) as fh:
            db = json.load(fh)
        meta = db["DEVICE_METADATA"]["localhost"]
        del meta["platform"], meta["hwsku"]
        del db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"]
        path = os.path.join(tmpdir(), "config_db.json")
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        r = check(path)
        self.assertEqual(r.returncode, 1)
        errors = [l for l in r.stderr.splitlines() if ": warning: " not in l]
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("BUFFER_PROFILE|pg_lossless_400000_40m_profile: size 1270 is less than "
                      "xon 0 + xoff 190500: under the mellanox buffer convention (the default",
                      errors[0])
        meta["buffer_convention"] = "broadcom"
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        self.assert_warnings_only(path, len(db["PORT"]))

    def test_unmodelled_is_an_error_in_a_rocesw_file(self):
        d = tmpdir()
        path = os.path.join(d, "sw.yaml")
        with open(path, "w") as fh:
            fh.write("PORT:\n  Ethernet0: {speed: 400000, autoneg: 'on'}\n"
                     "VLAN:\n  Vlan10: {vlanid: '10'}\n")
        r = check(path)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.splitlines(), [
            f"{path}:2: PORT|Ethernet0: autoneg: a SONiC field rocesw does not model (no PHY)",
            f"{path}:3: VLAN: a SONiC table rocesw does not model (no VLANs)"])
        # the same file as SONiC's: warnings
        r = check(path, "--sonic")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.splitlines(), [
            f"{path}:3: warning: table VLAN ignored (no VLANs)",
            f"{path}:2: warning: PORT: field 'autoneg' ignored (no PHY)"])

    def test_sonic_keys_and_fields(self):
        db = {
            "DEVICE_METADATA": {"localhost": {"hostname": "t1", "type": "LeafRouter",
                                              "buffer_model": "traditional"}},
            "SWITCH": {"switch": {"fdb_aging_time": "600"}},
            "PORT": {"Ethernet0": {"speed": "400000", "role": "Ext"},
                     "Ethernet8": {"speed": "400000"}},
            "NEIGH": {"Ethernet0|10.0.0.1": {"neigh": "02:00:00:00:00:01"},
                      "Ethernet8|10.0.0.3": {"neigh": "02:00:00:00:00:03"}},
            "STATIC_ROUTE": {"default|10.3.0.0/16": {"nexthop": "10.0.0.1,10.0.0.3,10.0.0.1"}},
            "SWITCH_HASH": {"GLOBAL": {
                "ecmp_hash_ipv4_rdma": ["DST_IP", "SRC_IP", "RDMA_BTH_DEST_QP"],
                "ecmp_hash_ipv6_rdma": ["DST_IP", "SRC_IP", "RDMA_BTH_DEST_QP"],
                "lag_hash": ["SRC_IP"]}},
        }
        d = tmpdir()
        path = os.path.join(d, "config_db.json")
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        r = check(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        # a SWITCH table does not make it a zone; the VRF-prefixed route is one route over
        # one group (of two members: the address named twice counts once)
        self.assertIn(f"{path}: ok: 2 ports, 2 neighbours, 1 next-hop groups, 1 routes",
                      r.stdout)
        self.assertIn("nexthop: 10.0.0.1 listed twice; counted once", r.stderr)
        self.assertIn("field 'lag_hash' ignored (no LAGs)", r.stderr)
        self.assertIn("SONiC role 'Ext' ignored", r.stderr)
        self.assertIn("field 'buffer_model' ignored", r.stderr)
        # another VRF is refused, by name
        db["STATIC_ROUTE"] = {"Vrf_blue|10.3.0.0/16": {"nexthop": "10.0.0.1"}}
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        r = check(path)
        self.assertEqual(r.returncode, 1)
        self.assertIn("STATIC_ROUTE: VRF 'Vrf_blue': only the default VRF is modelled",
                      r.stderr)
        # RDMA lists that disagree are an error: one list hashes every packet
        db["STATIC_ROUTE"] = {}
        db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_ipv6_rdma"] = ["DST_IP"]
        with open(path, "w") as fh:
            json.dump(db, fh, indent=4)
        r = check(path)
        self.assertEqual(r.returncode, 1)
        self.assertIn("ecmp_hash_ipv6_rdma: differs from ecmp_hash_ipv4_rdma", r.stderr)


if __name__ == "__main__":
    unittest.main()
