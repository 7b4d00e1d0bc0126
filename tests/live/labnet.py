"""A small lab in network namespaces: hosts joined by veth pairs to the switch's af_packet ports.
Addresses exist only inside the namespaces made here; everything is removed on close."""
import os
import signal
import subprocess
import time


def sh(*cmd, check=True, ns=None):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Lab:
    def __init__(self, tag):
        self.tag = tag
        self.namespaces = []
        self.links = []
        self.procs = []

    def host(self, name, switch_if, mac):
        """Namespace `name` with eth0 (MAC mac) cabled to `switch_if` in the root namespace."""
        ns = f"{self.tag}-{name}"
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", switch_if, check=False)
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "link", "add", switch_if, "type", "veth", "peer", "name", f"{switch_if}p")
        self.links.append(switch_if)
        sh("ip", "link", "set", f"{switch_if}p", "netns", ns)
        sh("ip", "link", "set", f"{switch_if}p", "name", "eth0", ns=ns)
        sh("ip", "link", "set", "eth0", "address", mac, ns=ns)
        for dev, where in ((switch_if, None), ("eth0", ns)):
            # no IPv6 autoconfiguration chatter on the lab links
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=where, check=False)
            sh("ip", "link", "set", dev, "up", ns=where)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        return ns

    def start(self, cmd, ns=None, **kw):
        if ns:
            cmd = ["ip", "netns", "exec", ns] + list(cmd)
        p = subprocess.Popen(cmd, **kw)
        self.procs.append(p)
        return p

    def capture(self, ns, path, bpf="udp port 4791"):
        p = self.start(["tcpdump", "-i", "eth0", "-U", "-n", "-s", "0", "-w", path, bpf], ns=ns,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once the socket is ready
        deadline = time.time() + 10
        while time.time() < deadline:
            line = p.stderr.readline()
            if "listening on" in line or not line:
                break
        return p

    @staticmethod
    def stop(p, sig=signal.SIGINT, timeout=30):
        if p.poll() is None:
            p.send_signal(sig)
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()
        for ns in self.namespaces:
            sh("ip", "netns", "del", ns, check=False)
        for link in self.links:
            sh("ip", "link", "del", link, check=False)


def captured(path):
    """Frames tcpdump has written to path so far (it hands them over a ring block at a time)."""
    from scapy.utils import RawPcapReader
    if not os.path.exists(path) or os.path.getsize(path) <= 24:
        return 0  # not even a pcap header yet
    r = RawPcapReader(path)
    try:
        return sum(1 for _ in r)
    finally:
        r.close()


def wait_for_line(stream, text, timeout=60):
    """Reads lines until one holds text; returns the lines read."""
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"'{text}' not seen; got: {''.join(seen)}")


ROUTER_MAC = "02:00:00:00:01:00"
HOST_MAC = "02:00:00:00:10:01"
UPLINK_MACS = [f"02:00:00:00:20:0{i}" for i in range(4)]


def four_uplink_config(tag, hostname, hash_tables, group_fields):
    """A switch config: host h0 (10.1.0.1) on Ethernet0 and uplinks u0-u3 on Ethernet8-32, af_packet
    ports on the veths TAG-h0 and TAG-u0..3, 10 Gb/s; 10.2.0.0/16 over the ECMP group `uplinks`
    of the four. hash_tables: YAML of SWITCH_HASH / HASH_POLICY; group_fields: more fields of
    the group (e.g. "hash_policy: dest_qp")."""
    ports = "\n".join(f'  Ethernet{8 * i}: {{speed: 10000, role: {"host" if i == 0 else "uplink"}, '
                      f'devargs: "net_af_packet{i},iface={tag}-{"h0" if i == 0 else f"u{i - 1}"}"}}'
                      for i in range(5))
    neigh = "\n".join(f'  "Ethernet{8 * (i + 1)}|10.255.0.{2 * i + 1}": {{neigh: "{UPLINK_MACS[i]}"}}'
                      for i in range(4))
    return f"""DEVICE_METADATA:
  localhost: {{hostname: {hostname}, mac: "{ROUTER_MAC}"}}
PORT:
{ports}
{hash_tables}
NEIGH:
  "Ethernet0|10.1.0.1": {{neigh: "{HOST_MAC}"}}
{neigh}
NEXTHOP_GROUP:
  uplinks: {{nexthop: "10.255.0.1,10.255.0.3,10.255.0.5,10.255.0.7", {group_fields}}}
STATIC_ROUTE:
  "10.1.0.0/24": {{nexthop: 10.1.0.1}}
  "10.2.0.0/16": {{nexthop_group: uplinks}}
"""
