"""Least privilege (docs/security.md "Privileges"), checked against the kernel's own word
(/proc/PID/task/*/status, `ip link`), not against what the dataplane says of itself.

`rocesw-dataplane --user nobody`, started as root, opens af_packet ports on veths in namespaces,
its memory and its control socket, then runs as nobody:
- every thread: uids and gids 65534, no capability permitted or effective, no_new_privs; the main
  thread's bounding set empty, the others' no more than CAP_NET_ADMIN;
- it still forwards (every frame h0 sends is transmitted), answers root on its control socket
  (show, set_port), and at exit writes --stats-json as nobody, into a directory nobody may write;
  into one it may not, it exits 1 naming the file;
- the read-only role (--control-readonly-group): a member (its primary gid, SO_PEERCRED) reaches
  the socket (an ACL entry beside the control group's 0660), gets `hello` with "access":
  "read-only" and every `show`, and has each op that changes the switch refused and logged with
  its uid, the generation unchanged; a control-group member changes the switch; anyone else is
  refused at connect.
- an af_xdp port keeps CAP_NET_ADMIN in the main thread only, with which the dataplane detaches
  its XDP program at exit (without it the program stays on the interface);
- roceswd with ROCESWD.GLOBAL user runs as that user itself, without capabilities, its launcher
  (root, the unit's capabilities) its only privileged part; the dataplane runs as the user
  after every (re)start, a kill -9 brings it back with the running copy restored, a reload
  applies; roceswd confined as config/roceswd.service confines it where the test can: the
  unit's CapabilityBoundingSet, NoNewPrivileges and UMask (the rest of its sandbox needs
  systemd: docs/security.md)."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

import rocepkt  # noqa: E402
from common import BUILD, ROCESW, dataplane_cmd, require_root, tmpdir  # noqa: E402
from labnet import (HOST_MAC, ROUTER_MAC, UPLINK_MACS, Control, Lab,  # noqa: E402
                    four_uplink_config, sh, wait_drained, wait_for_line, wait_in_file,
                    wait_until)

PREFIX = "rswpriv"
NOBODY = 65534
# groups and users that need no entry in the user database: SO_PEERCRED's primary gid decides
CONTROL_GID, READONLY_GID = 4200, 4201
WRITER, READER, STRANGER = (4300, CONTROL_GID), (4301, READONLY_GID), (4302, 4302)
CAP_NET_ADMIN = 1 << 12
BIG_ROUTES = 8000  # `show routes` then answers more than a default socket buffer holds
CHANGES = [
    {"op": "set_port", "port": "Ethernet8", "admin": "down"},
    {"op": "set_route", "prefix": "10.9.0.0/16", "nexthop": "10.255.0.1"},
    {"op": "del_route", "prefix": "10.2.0.0/16"},
    {"op": "pfc_storm", "port": "Ethernet8", "priority": 3, "on": True},
    {"op": "trace_add", "count": 10},
    {"op": "trace_clear"},
]

CLIENT = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connect": e.errno})); sys.exit(0)
out = []
for req in json.loads(sys.argv[2]):
    fds = [os.open(f, os.O_RDONLY) for f in req.pop("open", [])]
    if fds:
        socket.send_fds(s, [json.dumps(req).encode()], fds)
    else:
        s.send(json.dumps(req).encode())
    out.append(json.loads(s.recv(1 << 22)))
print(json.dumps(out))
"""


def tasks(pid):
    """{thread name: {field: value}} of /proc/PID/task/*/status."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            st = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        out[f"{st['Name']}/{tid}"] = st
    return out


class LeastPrivilege(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.dir = tmpdir()
        os.chmod(cls.dir, 0o755)
        cls.out = os.path.join(cls.dir, "nobody")  # nobody's own directory: --stats-json
        os.mkdir(cls.out)
        os.chown(cls.out, NOBODY, NOBODY)
        cls.stats = os.path.join(cls.out, "stats.json")
        cls.cfg = os.path.join(cls.dir, "switch.yaml")
        with open(cls.cfg, "w") as f:
            f.write(four_uplink_config("rswp", "live-priv", "", "hash_policy: default") +
                    "".join(f'  "172.16.{i // 256}.{i % 256}/32": {{blackhole: true}}\n'
                            for i in range(BIG_ROUTES)))
        cls.sock = os.path.join(cls.dir, "dp.sock")
        cls.lab = Lab("rswp")
        try:
            cls.h0 = cls.lab.host("h0", "rswp-h0", HOST_MAC)
            cls.ups = [cls.lab.host(f"u{i}", f"rswp-u{i}", UPLINK_MACS[i]) for i in range(4)]
            cls.dp = cls.lab.start(
                dataplane_cmd(PREFIX, "--config", cls.cfg, "--control-socket", cls.sock,
                              "--control-group", str(CONTROL_GID), "--control-readonly-group",
                              str(READONLY_GID), "--user", "nobody", "--stats-json", cls.stats),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            cls.started = wait_for_line(cls.dp.stderr, "forwarding")
            cls.log = []
            threading.Thread(target=lambda: cls.log.extend(iter(cls.dp.stderr.readline, "")),
                             daemon=True).start()
            cls.stdout = []
            threading.Thread(target=lambda: cls.stdout.append(cls.dp.stdout.read()),
                             daemon=True).start()
        except BaseException:
            cls.lab.close()
            raise
        cls.ctl = Control(cls.sock)

    @classmethod
    def tearDownClass(cls):
        cls.lab.close()

    def as_peer(self, who, requests):
        return as_peer(self, self.sock, who, requests)

    def generation(self):
        return self.ctl.show("config")["generation"]

    def wait_log(self, text, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = [line for line in self.log if text in line]
            if found:
                return found
            time.sleep(0.05)
        self.fail(f"'{text}' not in the dataplane's log: {''.join(self.log[-20:])}")

    def test_1_every_thread_is_nobody_without_capabilities(self):
        self.assertIn("running as nobody (uid 65534, gid 65534); capabilities kept: none",
                      self.started)
        ts = tasks(self.dp.pid)
        self.assertGreaterEqual(len(ts), 3, "main, the worker and EAL's own threads")
        for name, st in ts.items():
            with self.subTest(thread=name):
                self.assertEqual(st["Uid"].split(), ["65534"] * 4)
                self.assertEqual(st["Gid"].split(), ["65534"] * 4)
                self.assertEqual(st["Groups"].split(), ["65534"], "nobody's groups only")
                self.assertEqual(int(st["CapPrm"], 16), 0)
                self.assertEqual(int(st["CapEff"], 16), 0)
                self.assertEqual(int(st["CapAmb"], 16), 0)
                self.assertEqual(st["NoNewPrivs"], "1")
                self.assertEqual(int(st["CapBnd"], 16) & ~CAP_NET_ADMIN, 0)
        main = next(st for name, st in ts.items() if name.endswith(f"/{self.dp.pid}"))
        self.assertEqual(int(main["CapBnd"], 16), 0)

    def test_2_forwards_and_serves_root(self):
        before = self.ctl.counters()["conservation"]["received"]
        s = self.lab.socket(self.h0)
        frames = [rocepkt.roce(src="10.1.0.1", dst="10.2.0.1", sport=49152 + i, dqp=0x100 + i,
                               smac=HOST_MAC, dmac=ROUTER_MAC) for i in range(200)]
        for f in frames:
            s.send(bytes(f))
        c = wait_drained(self.ctl, before + len(frames))
        self.assertEqual(c["conservation"]["received"] - before, len(frames))
        self.assertEqual(c["ports"][0]["rx_packets"], c["conservation"]["received"])
        # root changes the switch after the drop
        gen = self.generation()
        for admin in ("down", "up"):
            r = self.ctl.request({"v": 1, "op": "set_port", "port": "Ethernet8", "admin": admin})
            self.assertTrue(r["ok"], r)
        self.assertEqual(self.generation(), gen + 2)

    def test_3_socket_file(self):
        st = os.stat(self.sock)
        # the user the dataplane became owns it (its uid may use it anyway)
        self.assertEqual((st.st_mode & 0o777, st.st_uid, st.st_gid),
                         (0o660, NOBODY, CONTROL_GID))
        # the kernel's ACL (acl(5)'s xattr: version 2, then tag, permissions, id per entry)
        raw = os.getxattr(self.sock, "system.posix_acl_access")
        self.assertEqual(struct.unpack_from("<I", raw)[0], 2)
        entries = {(tag, qid): perm for tag, perm, qid in struct.iter_unpack("<HHI", raw[4:])}
        ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 1, 4, 8, 0x10, 0x20
        undefined = 0xFFFFFFFF
        self.assertEqual(entries, {(ACL_USER_OBJ, undefined): 6, (ACL_GROUP_OBJ, undefined): 6,
                                   (ACL_GROUP, READONLY_GID): 6, (ACL_MASK, undefined): 6,
                                   (ACL_OTHER, undefined): 0})

    def test_4_readonly_group_reads_and_changes_nothing(self):
        gen = self.generation()
        other = os.path.join(self.dir, "other.yaml")
        with open(other, "w") as f:
            f.write(four_uplink_config("rswp", "live-priv", "", "hash_policy: default")
                    .replace("10.2.0.0/16", "10.3.0.0/16"))
        os.chmod(other, 0o644)
        reqs = [{"v": 1, "op": "hello"}, {"v": 1, "op": "show", "what": "counters"},
                {"v": 1, "op": "show", "what": "routes"}]
        reqs += [dict(v=1, **c) for c in CHANGES]
        reqs.append({"v": 1, "op": "reload", "files": ["other.yaml"], "open": [other]})
        got = self.as_peer(READER, reqs)
        self.assertEqual(got[0]["result"]["access"], "read-only")
        self.assertTrue(got[1]["ok"] and got[2]["ok"], got[1:3])
        self.assertIn("conservation", got[1]["result"])
        for req, r in zip(reqs[3:], got[3:]):
            with self.subTest(op=req["op"]):
                self.assertFalse(r["ok"])
                self.assertEqual(r["error"], f"{req['op']} changes the switch: uid {READER[0]} "
                                 "is in the read-only control group (hello, show, "
                                 "hash_explain and trace_show only)")
        self.assertEqual(self.generation(), gen, "nothing changed")
        ports = self.ctl.show("ports")
        ports = ports["ports"] if isinstance(ports, dict) else ports
        self.assertEqual(next(p for p in ports if p["name"] == "Ethernet8")["admin_status"], "up")
        # each refusal logged with who asked
        lines = self.wait_log(f"control: uid {READER[0]} gid {READER[1]} pid ")
        for op in ("set_port", "set_route", "del_route", "pfc_storm", "reload", "trace_add",
                   "trace_clear"):
            self.assertTrue(any(f'"op":"{op}"' in line and "refused:" in line for line in lines),
                            f"{op} refused and logged: {lines}")

    def test_5_control_group_changes_stranger_refused(self):
        gen = self.generation()
        got = self.as_peer(WRITER, [{"v": 1, "op": "hello"},
                                    {"v": 1, "op": "set_port", "port": "Ethernet8",
                                     "admin": "down"},
                                    {"v": 1, "op": "set_port", "port": "Ethernet8",
                                     "admin": "up"}])
        self.assertEqual(got[0]["result"]["access"], "read-write")
        self.assertTrue(got[1]["ok"] and got[2]["ok"], got)
        self.assertEqual(self.generation(), gen + 2)
        got = self.as_peer(STRANGER, [{"v": 1, "op": "hello"}])
        # the file's mode and ACL stop it first (EACCES); SO_PEERCRED would refuse it next
        self.assertEqual(got, {"connect": 13})

    def test_6_large_reply_after_the_drop(self):
        """Without CAP_NET_ADMIN the reply buffer is not forced to 4 MiB: it grows as far as
        net.core.wmem_max lets it (the kernel doubles SO_SNDBUF), and a reply beyond that is
        answered with an error naming the limit, never a silent hang-up."""
        with open("/proc/sys/net/core/wmem_max") as f:
            wmem_max = int(f.read())
        with open("/proc/sys/net/core/wmem_default") as f:
            wmem_default = int(f.read())
        r = self.ctl.request({"v": 1, "op": "show", "what": "routes"})
        size = len(json.dumps(r, separators=(",", ":")))
        if r["ok"]:
            self.assertGreater(size, 2 * wmem_default, "more than a default buffer holds")
            self.assertLessEqual(size, 2 * wmem_max)
            routes = r["result"]["routes"] if isinstance(r["result"], dict) else r["result"]
            self.assertEqual(sum(x["prefix"].startswith("172.16.") for x in routes), BIG_ROUTES)
        else:
            self.assertRegex(r["error"], r"^reply of \d+ bytes is larger than this connection's "
                             r"send buffer \(\d+ bytes; raise net\.core\.wmem_max\)$")
            self.assertGreater(4 << 20, 2 * wmem_max)

    def test_9_stats_json_written_as_nobody(self):
        rc = Lab.stop(self.dp, signal.SIGTERM)
        self.assertEqual(rc, 0, "".join(self.log[-20:]))
        st = os.stat(self.stats)
        self.assertEqual((st.st_uid, st.st_gid), (NOBODY, NOBODY))
        with open(self.stats) as f:
            js = json.load(f)
        self.assertEqual([p["name"] for p in js["ports"]][:2], ["Ethernet0", "Ethernet8"])
        self.assertGreaterEqual(js["ports"][0]["rx_packets"], 200)


class LeastPrivilegeEdges(unittest.TestCase):
    """Starts of their own: --stats-json nobody cannot write, and an af_xdp port."""

    def setUp(self):
        require_root()
        self.dir = tmpdir()  # 0700 root: nobody may not write in it
        self.lab = Lab("rswq")

    def tearDown(self):
        self.lab.close()

    def veth(self, name):
        sh("ip", "link", "del", name, check=False)
        sh("ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p")
        self.lab.links.append(name)
        for dev in (name, f"{name}p"):
            sh("ip", "link", "set", dev, "up")

    def start(self, devargs, *args):
        cfg = os.path.join(self.dir, "switch.yaml")
        with open(cfg, "w") as f:
            f.write(f'DEVICE_METADATA:\n  localhost: {{hostname: edge, mac: "{ROUTER_MAC}"}}\n'
                    f'PORT:\n  Ethernet0: {{speed: 10000, role: host, devargs: "{devargs}"}}\n'
                    '  Ethernet8: {speed: 10000, role: uplink, devargs: "net_null1"}\n')
        return self.lab.start(dataplane_cmd(PREFIX + "e", "--config", cfg, "--user", "nobody",
                                            *args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_stats_json_unwritable_is_named(self):
        self.veth("rswq-a")
        stats = os.path.join(self.dir, "stats.json")
        dp = self.start("net_af_packet0,iface=rswq-a", "--stats-json", stats)
        wait_for_line(dp.stderr, "forwarding")
        rc = Lab.stop(dp, signal.SIGTERM)
        err = dp.stderr.read()
        self.assertEqual(rc, 1, err)
        self.assertIn(f"cannot write {stats}", err)
        self.assertFalse(os.path.exists(stats))

    def test_af_xdp_keeps_net_admin_to_detach_its_program(self):
        self.veth("rswq-x")
        dp = self.start("net_af_xdp0,iface=rswq-x")
        seen = wait_for_line(dp.stderr, "forwarding")
        self.assertIn("capabilities kept: cap_net_admin (for net_af_xdp0,iface=rswq-x, "
                      "net_af_xdp)", seen)
        link = json.loads(sh("ip", "-j", "-d", "link", "show", "dev", "rswq-x").stdout)[0]
        self.assertIn("xdp", link, "the XDP program af_xdp attached")
        for name, st in tasks(dp.pid).items():
            with self.subTest(thread=name):
                self.assertEqual(st["Uid"].split(), ["65534"] * 4)
                main = name.endswith(f"/{dp.pid}")
                self.assertEqual(int(st["CapEff"], 16), CAP_NET_ADMIN if main else 0)
                self.assertEqual(int(st["CapPrm"], 16), CAP_NET_ADMIN if main else 0)
        rc = Lab.stop(dp, signal.SIGTERM)
        self.assertEqual(rc, 0, dp.stderr.read())
        link = json.loads(sh("ip", "-j", "-d", "link", "show", "dev", "rswq-x").stdout)[0]
        self.assertNotIn("xdp", link, "detached at exit")


UNIT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "config", "roceswd.service")


def unit_confinement():
    """setpriv and sh arguments that apply the unit's CapabilityBoundingSet, NoNewPrivileges
    and UMask to the command that follows."""
    caps, umask, nnp = [], None, False
    with open(UNIT) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key == "CapabilityBoundingSet":
                caps += value.split()
            elif key == "UMask":
                umask = value
            elif key == "NoNewPrivileges":
                nnp = value == "yes"
    assert caps and umask and nnp, "the unit sets all three"
    bounding = "-all," + ",".join("+" + c.removeprefix("CAP_").lower() for c in caps)
    return ["setpriv", "--bounding-set", bounding, "--inh-caps", "-all", "--no-new-privs",
            "sh", "-c", f'umask {umask} && exec "$@"', "roceswd"]


def status(pid):
    """/proc/PID/status as {field: value}."""
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def unit_caps():
    """The unit's CapabilityBoundingSet as a mask (capability numbers from capabilities(7))."""
    numbers = {"CAP_CHOWN": 0, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7,
               "CAP_SETPCAP": 8, "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14,
               "CAP_PERFMON": 38, "CAP_BPF": 39}
    mask = 0
    with open(UNIT) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key == "CapabilityBoundingSet":
                for c in value.split():
                    mask |= 1 << numbers[c]
    return mask


def as_peer(test, sock, who, requests):
    """requests sent on one connection by a process of uid/gid `who` (no other groups)."""
    r = subprocess.run(["setpriv", f"--reuid={who[0]}", f"--regid={who[1]}", "--clear-groups",
                        sys.executable, "-c", CLIENT, sock, json.dumps(requests)],
                       capture_output=True, text=True, timeout=60)
    test.assertEqual(r.returncode, 0, r.stderr)
    return json.loads(r.stdout)


class RoceswdUser(unittest.TestCase):
    """roceswd, confined as its unit confines it, with ROCESWD.GLOBAL user: it drops to that user
    itself (no capability, no_new_privs, root not regained) and leaves root to its launcher,
    which only starts and stops the dataplane; the dataplane runs as the user after every
    (re)start, the running copy restored into it by reload."""

    def setUp(self):
        require_root()
        self.dir = tmpdir()
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "run", "dp.sock")
        self.cfg = os.path.join(self.dir, "switch.yaml")
        self.base = ("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 1024 --no-pci -l 0-1 "
                     f"--no-shconf --file-prefix {PREFIX}d --log-level error\", "
                     f"control_socket: {self.sock}, user: nobody, "
                     f"control_group: \"{CONTROL_GID}\", "
                     f"control_readonly_group: \"{READONLY_GID}\"}}\n" +
                     four_uplink_config("rswr", "live-priv-d", "", "hash_policy: default"))
        with open(self.cfg, "w") as f:
            f.write(self.base)
        os.chmod(self.cfg, 0o644)  # roceswd reads it as nobody on every reload
        self.lab = Lab("rswr")
        self.lab.host("h0", "rswr-h0", HOST_MAC)
        for i in range(4):
            self.lab.host(f"u{i}", f"rswr-u{i}", UPLINK_MACS[i])
        self.log = os.path.join(self.dir, "roceswd.log")
        with open(self.log, "w") as log:
            self.daemon = self.lab.start(unit_confinement() +
                                         [os.path.join(BUILD, "roceswd"), "--config", self.cfg,
                                          "--foreground"], stdout=log, stderr=log)

    def tearDown(self):
        Lab.stop(self.daemon, signal.SIGTERM)
        self.lab.close()

    def dataplane(self):
        """The dataplane's pid, from the control socket's peer (SO_PEERCRED), and its status."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(self.sock)
        pid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        s.close()
        return pid, status(pid)

    def routes(self):
        r = subprocess.run([ROCESW, "show", "routes", "--json", "--socket", self.sock],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def assert_user(self, st, what):
        with self.subTest(process=what):
            self.assertEqual(st["Uid"].split(), ["65534"] * 4)
            self.assertEqual(st["Gid"].split(), ["65534"] * 4)
            self.assertEqual(int(st["CapPrm"], 16), 0)
            self.assertEqual(int(st["CapEff"], 16), 0)
            self.assertEqual(int(st["CapAmb"], 16), 0)
            self.assertEqual(st["NoNewPrivs"], "1")

    def test_roceswd_and_its_dataplane_run_as_user(self):
        wait_in_file(self.log, "dataplane answers on")
        wait_in_file(self.log, "running copy restored: ")
        # the run directory roceswd made is passed through, not listed: a control-group member
        # (neither root nor the user) reaches the socket, a stranger is stopped by its mode
        self.assertEqual(os.stat(os.path.dirname(self.sock)).st_mode & 0o777, 0o751)
        got = as_peer(self, self.sock, WRITER, [{"v": 1, "op": "hello"}])
        self.assertEqual(got[0]["result"]["access"], "read-write")
        self.assertEqual(as_peer(self, self.sock, STRANGER, [{"v": 1, "op": "hello"}]),
                         {"connect": 13})
        # roceswd itself: nobody, nothing to regain (empty bounding set)
        me = status(self.daemon.pid)
        self.assert_user(me, "roceswd")
        self.assertEqual(int(me["CapBnd"], 16), 0)
        # its one child is the launcher: root, the unit's capabilities, nothing more
        with open(f"/proc/{self.daemon.pid}/task/{self.daemon.pid}/children") as f:
            children = [int(p) for p in f.read().split()]
        self.assertEqual(len(children), 1, children)
        launcher = status(children[0])
        self.assertEqual(launcher["Name"], "roceswd-launch")
        self.assertEqual(launcher["Uid"].split(), ["0"] * 4)
        self.assertEqual(int(launcher["CapBnd"], 16), unit_caps())
        self.assertEqual(int(launcher["CapPrm"], 16) & ~unit_caps(), 0)
        self.assertEqual(launcher["NoNewPrivs"], "1")
        # the dataplane: the launcher's child, nobody
        pid, st = self.dataplane()
        self.assertEqual(int(st["PPid"]), children[0])
        self.assert_user(st, "dataplane")
        self.assertEqual(os.stat(self.sock).st_uid, NOBODY, "the socket is the user's")
        # roceswd's copies are the user's, root's boot copy root's
        running = os.path.join(self.dir, "run", "roceswd", "running-config.yaml")
        self.assertEqual(os.stat(running).st_uid, NOBODY)
        self.assertEqual(os.stat(os.path.join(self.dir, "run", "boot-config.yaml")).st_uid, 0)
        # a reload applies, by roceswd as nobody
        with open(self.cfg, "w") as f:
            f.write(self.base + '  "10.3.0.0/16": {nexthop: 10.255.0.7}\n')
        self.daemon.send_signal(signal.SIGHUP)
        wait_in_file(self.log, "reloaded: ")
        self.assertIn("10.3.0.0/16", self.routes())
        self.assertEqual(self.dataplane()[0], pid, "reloaded, not restarted")
        # kill -9: the launcher starts it again (from root's boot copy), and roceswd restores
        # the running copy into it: the reloaded route is back
        os.kill(pid, signal.SIGKILL)
        wait_in_file(self.log, "dataplane answers on", count=2)
        wait_in_file(self.log, "running copy restored: ", count=2)
        pid2, st = self.dataplane()
        self.assertNotEqual(pid2, pid)
        self.assertEqual(int(st["PPid"]), children[0])
        self.assert_user(st, "restarted dataplane")
        self.assertIn("10.3.0.0/16", self.routes())
        self.assert_user(status(self.daemon.pid), "roceswd after the restart")
        # SIGTERM: the launcher stops the dataplane, roceswd exits 0 (under ASan: no leak)
        launcher = children[0]
        self.assertEqual(Lab.stop(self.daemon, signal.SIGTERM), 0)
        wait_until(lambda: not os.path.exists(f"/proc/{pid2}"), "the dataplane to stop")
        wait_until(lambda: not os.path.exists(f"/proc/{launcher}/status") or
                   status(launcher)["State"].startswith("Z"), "the launcher to end")

    def test_launcher_death_leaves_the_dataplane_to_the_next_roceswd(self):
        wait_in_file(self.log, "running copy restored: ")
        pid, _ = self.dataplane()
        with open(f"/proc/{self.daemon.pid}/task/{self.daemon.pid}/children") as f:
            launcher = int(f.read().split()[0])
        os.kill(launcher, signal.SIGKILL)
        # roceswd can no longer start a dataplane: it exits 1 (systemd's Restart=on-failure)
        self.assertEqual(self.daemon.wait(timeout=30), 1)
        self.assertEqual(self.dataplane()[0], pid, "still forwarding")
        # the next roceswd (as nobody) adopts it; its own launcher restarts it after a kill
        with open(self.log, "a") as log:
            self.daemon = self.lab.start(unit_confinement() +
                                         [os.path.join(BUILD, "roceswd"), "--config", self.cfg,
                                          "--foreground"], stdout=log, stderr=log)
        wait_in_file(self.log, f"re-attaching to the dataplane pid {pid}")
        wait_in_file(self.log, "reloaded: ")
        self.assert_user(status(self.daemon.pid), "the next roceswd")
        os.kill(pid, signal.SIGKILL)
        wait_in_file(self.log, "running copy restored: ", count=2)
        pid2, st = self.dataplane()
        self.assertNotEqual(pid2, pid)
        self.assert_user(st, "its dataplane")


ZONE_SRC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "configs", "zone-ecmp2")
LAB_PY = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts", "lab.py")


class RoceswdZoneUser(unittest.TestCase):
    """roceswd --zone with ROCESWD user: the same split for a zone (root's boot snapshot, the
    user's running snapshot restored into a restarted dataplane)."""

    def setUp(self):
        require_root()
        self.dir = tmpdir()
        os.chmod(self.dir, 0o755)
        self.zdir = os.path.join(self.dir, "zone")
        shutil.copytree(ZONE_SRC, self.zdir)
        os.chmod(self.zdir, 0o755)
        self.zone = os.path.join(self.zdir, "zone.yaml")
        self.sock = os.path.join(self.dir, "run", "dp.sock")
        with open(self.zone, "a") as f:
            f.write("ROCESWD:\n  GLOBAL: {eal_args: \"--no-huge -m 2048 --no-pci -l 0-1 "
                    f"--no-shconf --file-prefix {PREFIX}z --log-level error\", "
                    f"control_socket: {self.sock}, user: nobody}}\n")
        for f in os.listdir(self.zdir):
            os.chmod(os.path.join(self.zdir, f), 0o644)
        subprocess.run([LAB_PY, "down", self.zone], capture_output=True)
        r = subprocess.run([LAB_PY, "up", self.zone], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.log = os.path.join(self.dir, "roceswd.log")
        with open(self.log, "w") as log:
            self.daemon = subprocess.Popen(unit_confinement() +
                                           [os.path.join(BUILD, "roceswd"), "--zone", self.zone,
                                            "--foreground"], stdout=log, stderr=log)

    def tearDown(self):
        Lab.stop(self.daemon, signal.SIGTERM)
        subprocess.run([LAB_PY, "down", self.zone], capture_output=True)

    def routes(self, sw):
        r = subprocess.run([ROCESW, "show", "routes", "--json", "--switch", sw, "--socket",
                            self.sock], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_zone_restarted_with_the_running_snapshot(self):
        wait_in_file(self.log, "running copy restored: ")
        self.assertEqual(status(self.daemon.pid)["Uid"].split(), ["65534"] * 4)
        boot = os.path.join(self.dir, "run", "boot-zone")
        self.assertEqual(os.stat(boot).st_uid, 0)
        self.assertEqual(os.stat(os.path.join(self.dir, "run", "roceswd", "running-zone"))
                         .st_uid, NOBODY)
        rtsw1 = os.path.join(self.zdir, "rtsw1.yaml")
        with open(rtsw1) as f:
            text = f.read()
        with open(rtsw1, "w") as f:
            f.write(text.replace('"10.1.0.0/16": {nexthop_group: uplinks}',
                                 '"10.1.0.0/16": {nexthop_group: uplinks}\n'
                                 '  "10.9.0.0/16": {nexthop_group: uplinks}'))
        wait_in_file(self.log, "reloaded: zone")
        self.assertIn("10.9.0.0/16", self.routes("rtsw1"))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(self.sock)
        pid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        s.close()
        self.assertEqual(status(pid)["Uid"].split(), ["65534"] * 4)
        os.kill(pid, signal.SIGKILL)
        wait_in_file(self.log, "running copy restored: ", count=2)
        self.assertIn("10.9.0.0/16", self.routes("rtsw1"), "the running zone, not the boot one")


if __name__ == "__main__":
    unittest.main()
