#!/usr/bin/python3
"""Builds (or removes) the lab a switch or zone config describes.

A switch config: for every port whose devargs are `net_af_packet*,iface=IF`, a network namespace
(named after the port's alias, else IF) joined to IF by a veth pair, with the host the config's
NEIGH table puts on that port. Where the port has an INTERFACE address (docs/config.md), eth0
gets an address in that subnet (the NEIGH entry's, else the other address of a /31 or /127, else
the switch's address + 1), IPv4 and IPv6, and default routes via the switch's addresses, with no
static neighbour: the switch answers ARP / ND and learns the host. A port without an INTERFACE
address (or --static-gateway) gets the old lab: the NEIGH entry's address as a /32 and a default
route through the switch's MAC as a static neighbour. Then `rocesw-dataplane -- --config CONFIG` or `roceswd --config CONFIG` forwards
between the namespaces.

A zone config (it has a SWITCH table, docs/replay.md): a namespace per HOST, named after the
host, joined by a veth pair to the interface its link's switch port opens (rsw-HOST by default,
or the iface= of af_packet/af_xdp devargs in HOST), addressed as above from that switch's
INTERFACE and NEIGH entries for the port. Then
`rocesw-dataplane -- --zone ZONE` forwards between them. Hosts it cannot build (a tap, memif or
NIC device, no NEIGH entry, a name too long for an interface) are refused, naming the host,
before anything is made.

usage: scripts/lab.py up|down CONFIG [--static-gateway]
Needs root. Addresses exist only inside the namespaces made here."""
import os
import argparse
import ipaddress
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


def hosts(cfg, port, any_family=False):
    """[(ip, mac)] of the IPv4 (or any) neighbours on a port."""
    out = []
    for key, n in (cfg.get("NEIGH") or {}).items():
        p, _, ip = key.partition("|")
        if p == port and (any_family or ":" not in ip):
            out.append((ip, n["neigh"]))
    return out


def interface_addrs(cfg, port):
    """[(switch address, host address, prefix length)] of the port's INTERFACE entries: the
    host's address is its NEIGH entry's when that is in the subnet, else the other address of a
    /31 or /127, else the switch's + 1."""
    out = []
    neigh = [ipaddress.ip_address(ip) for ip, _ in hosts(cfg, port, any_family=True)]
    for key in (cfg.get("INTERFACE") or {}):
        p, _, addr = str(key).partition("|")
        if p != port or not addr:
            continue
        itf = ipaddress.ip_interface(addr)
        mine = [a for a in neigh if a in itf.network and a != itf.ip]
        if mine:
            host = mine[0]
        elif itf.network.num_addresses == 2:
            host = [a for a in (itf.network[0], itf.network[1]) if a != itf.ip][0]
        else:
            host = itf.ip + 1
        out.append((str(itf.ip), str(host), itf.network.prefixlen))
    return out


def build_host(ns, iface, host, switch_mac, addrs=(), static_gateway=False):
    """Namespace ns, its eth0 the peer of veth iface; host = (ip, mac) or None; addrs from
    interface_addrs: the host's addresses and gateways, found by ARP / ND."""
    sh("ip", "netns", "del", ns, check=False)
    sh("ip", "link", "del", iface, check=False)
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", iface, "type", "veth", "peer", "name", "eth0", "netns", ns)
    v6 = any(":" in a[0] for a in addrs) and not static_gateway
    for dev, where in ((iface, None), ("eth0", ns)):
        sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6={0 if v6 else 1}", ns=where,
           check=False)
        # checksums and segments as a wire carries them: a veth otherwise hands the switch
        # UDP/TCP packets with checksums left for the NIC to fill, and oversized segments
        sh(ETHTOOL, "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off",
           ns=where, check=False)
        sh("ip", "link", "set", dev, "up", ns=where)
    sh("ip", "link", "set", "lo", "up", ns=ns)
    if host:
        sh("ip", "link", "set", "eth0", "address", host[1], ns=ns)
    if addrs and not static_gateway:
        for sw_ip, host_ip, plen in addrs:
            # nodad: the switch's port is the only other node on the link
            extra = ("nodad",) if ":" in host_ip else ()
            sh("ip", "addr", "add", f"{host_ip}/{plen}", "dev", "eth0", *extra, ns=ns)
            sh("ip", "-6" if ":" in host_ip else "-4", "route", "add", "default", "via", sw_ip,
               "dev", "eth0", ns=ns)
        return
    if host:
        ip, mac = host
        sh("ip", "link", "set", "eth0", "address", mac, ns=ns)
        sh("ip", "addr", "add", f"{ip}/32", "dev", "eth0", ns=ns)
        sh("ip", "neigh", "add", GATEWAY, "lladdr", switch_mac, "dev", "eth0", "nud",
           "permanent", ns=ns)
        sh("ip", "route", "add", "default", "via", GATEWAY, "dev", "eth0", "onlink", ns=ns)


def up(cfg, static_gateway=False):
    for port, iface, ns, switch_mac in ports(cfg):
        if not switch_mac:
            raise SystemExit("lab.py: no router MAC (DEVICE_METADATA|localhost mac)")
        hs = hosts(cfg, port)
        addrs = interface_addrs(cfg, port)
        build_host(ns, iface, hs[0] if hs else None, switch_mac, addrs, static_gateway)
        shown = [a[1] for a in addrs] if addrs and not static_gateway else [h[0] for h in hs[:1]]
        print(f"{ns}: eth0 <-> {iface} ({port})" + "".join(f", {a}" for a in shown))


def down(cfg):
    for _, iface, ns, _ in ports(cfg):
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", iface, check=False)
        print(f"{ns}: removed")


def zone_hosts(path, zone):
    """[(host, iface, (ip, mac), switch port MAC, "SWITCH|PORT")] of a zone config, or SystemExit
    naming every host that cannot be built."""
    switches = {}
    for name, s in (zone.get("SWITCH") or {}).items():
        cfg_path = os.path.join(os.path.dirname(os.path.abspath(path)), str(s.get("config")))
        with open(cfg_path) as f:
            switches[name] = yaml.safe_load(f) or {}
    out, bad = [], []
    links = zone.get("LINK") or []
    for host, h in (zone.get("HOST") or {}).items():
        h = h or {}
        ends = [l["b"] if l.get("a") == host else l["a"] for l in links
                if host in (l.get("a"), l.get("b"))]
        if len(ends) != 1 or "|" not in str(ends[0]):
            bad.append(f"host {host}: not linked to one switch port")
            continue
        sw, port = ends[0].split("|", 1)
        cfg = switches.get(sw, {})
        devargs = str(h.get("devargs") or (cfg.get("PORT", {}).get(port) or {}).get("devargs") or "")
        if devargs:
            m = re.match(r"net_af_(?:packet|xdp)[^,]*,(?:.*,)?iface=([^,]+)", devargs)
            if not m:
                bad.append(f"host {host}: devargs '{devargs}' is not an af_packet or af_xdp "
                           "port on a veth; lab.py builds only those (make the others by hand)")
                continue
            iface = m.group(1)
        else:
            iface = f"rsw-{host}"
        if len(iface) > 15 or len(host) > 15:
            bad.append(f"host {host}: interface {iface} is longer than 15 characters")
            continue
        neigh = hosts(cfg, port)
        addrs = interface_addrs(cfg, port)
        if not neigh and not addrs:
            bad.append(f"host {host}: {sw} has no INTERFACE address and no IPv4 NEIGH entry on "
                       f"{port}: no address to give it")
            continue
        p = cfg.get("PORT", {}).get(port) or {}
        mac = p.get("mac") or cfg.get("DEVICE_METADATA", {}).get("localhost", {}).get("mac")
        if not mac:
            bad.append(f"host {host}: {sw} has no MAC for {port} (PORT mac or DEVICE_METADATA)")
            continue
        out.append((host, iface, neigh[0] if neigh else None, mac, f"{sw}|{port}", addrs))
    if bad:
        raise SystemExit("lab.py: " + "; ".join(bad))
    return out


def zone_up(path, zone, static_gateway=False):
    for host, iface, addr, mac, end, addrs in zone_hosts(path, zone):
        if static_gateway and not addr:
            raise SystemExit(f"lab.py: host {host}: --static-gateway needs a NEIGH entry on {end}")
        build_host(host, iface, addr, mac, addrs, static_gateway)
        shown = [a[1] for a in addrs] if addrs and not static_gateway else [addr[0]]
        print(f"{host}: eth0 <-> {iface} ({end})" + "".join(f", {a}" for a in shown))


def zone_down(path, zone):
    for host, iface, _, _, _, _ in zone_hosts(path, zone):
        sh("ip", "netns", "del", host, check=False)
        sh("ip", "link", "del", iface, check=False)
        print(f"{host}: removed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["up", "down"])
    ap.add_argument("config")
    ap.add_argument("--static-gateway", action="store_true",
                    help="hosts reach the switch through a static neighbour entry for its MAC "
                         "(a /32 address, gateway 169.254.0.1), as before the switch answered ARP")
    a = ap.parse_args()
    with open(a.config) as f:
        cfg = yaml.safe_load(f)
    if not isinstance(cfg, dict):
        raise SystemExit(f"lab.py: {a.config}: not a mapping of tables")
    if "SWITCH" in cfg:
        if a.action == "up":
            zone_up(a.config, cfg, a.static_gateway)
        else:
            zone_down(a.config, cfg)
        return 0
    if not ports(cfg):
        raise SystemExit(f"lab.py: {a.config}: no af_packet port (devargs net_af_packet*,"
                         "iface=IF) and no SWITCH table: nothing to build")
    if a.action == "up":
        up(cfg, a.static_gateway)
    else:
        down(cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
