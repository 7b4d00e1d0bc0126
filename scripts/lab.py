#!/usr/bin/python3
"""Builds (or removes) the lab a switch config describes: for every port whose devargs are
`net_af_packet*,iface=IF`, a network namespace (named after the port's alias, else IF) joined to
IF by a veth pair, with the host the config's NEIGH table puts on that port: eth0 gets the
neighbour's MAC and IPv4 address, and a default route through the switch's MAC (the switch does
not answer ARP, so the gateway is a static neighbour). Then `rocesw-dataplane -- --config CONFIG`
or `roceswd --config CONFIG` forwards between the namespaces.

usage: scripts/lab.py up|down CONFIG
Needs root. Addresses exist only inside the namespaces made here."""
import argparse
import re
import subprocess
import sys

import yaml

GATEWAY = "169.254.0.1"  # link-local: never routed, only a name for the switch's MAC
ETHTOOL = "/usr/sbin/ethtool"


def sh(*cmd, ns=None, check=True):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode:
        raise SystemExit(f"lab.py: {' '.join(cmd)}: {r.stderr.strip()}")
    return r


def ports(cfg):
    """[(port, iface, namespace, mac of the switch port)] of the af_packet ports."""
    router = cfg.get("DEVICE_METADATA", {}).get("localhost", {}).get("mac")
    out = []
    for name, p in (cfg.get("PORT") or {}).items():
        m = re.match(r"net_af_packet\d*,.*iface=([^,]+)", str(p.get("devargs", "")))
        if m:
            out.append((name, m.group(1), str(p.get("alias") or m.group(1)), p.get("mac", router)))
    return out


def hosts(cfg, port):
    """[(ip, mac)] of the IPv4 neighbours on a port."""
    out = []
    for key, n in (cfg.get("NEIGH") or {}).items():
        p, _, ip = key.partition("|")
        if p == port and ":" not in ip:
            out.append((ip, n["neigh"]))
    return out


def up(cfg):
    for port, iface, ns, switch_mac in ports(cfg):
        if not switch_mac:
            raise SystemExit("lab.py: no router MAC (DEVICE_METADATA|localhost mac)")
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", iface, check=False)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", iface, "type", "veth", "peer", "name", "eth0", "netns", ns)
        for dev, where in ((iface, None), ("eth0", ns)):
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=where, check=False)
            # checksums and segments as a wire carries them: a veth otherwise hands the switch
            # UDP/TCP packets with checksums left for the NIC to fill, and oversized segments
            sh(ETHTOOL, "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off",
               ns=where, check=False)
            sh("ip", "link", "set", dev, "up", ns=where)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        hs = hosts(cfg, port)
        if hs:
            ip, mac = hs[0]
            sh("ip", "link", "set", "eth0", "address", mac, ns=ns)
            sh("ip", "addr", "add", f"{ip}/32", "dev", "eth0", ns=ns)
            sh("ip", "neigh", "add", GATEWAY, "lladdr", switch_mac, "dev", "eth0", "nud",
               "permanent", ns=ns)
            sh("ip", "route", "add", "default", "via", GATEWAY, "dev", "eth0", "onlink", ns=ns)
        print(f"{ns}: eth0 <-> {iface} ({port})" + (f", {hs[0][0]} {hs[0][1]}" if hs else ""))


def down(cfg):
    for _, iface, ns, _ in ports(cfg):
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", iface, check=False)
        print(f"{ns}: removed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["up", "down"])
    ap.add_argument("config")
    a = ap.parse_args()
    with open(a.config) as f:
        cfg = yaml.safe_load(f)
    (up if a.action == "up" else down)(cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
