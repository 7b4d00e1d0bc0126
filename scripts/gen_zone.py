#!/usr/bin/env python3
"""Write a two-stage AI Zone in the format of config/zone-2stage.yaml: RACKS rack switches
(RTSW) with HOSTS hosts each, CTSWS cluster switches, every RTSW linked to every CTSW.

  scripts/gen_zone.py --racks 192 --hosts 16 --ctsws 16 --out build/zone-3072

writes OUT/zone.yaml and OUT/<switch>.yaml. Host hi is rank i of a `rocesw gen` collective or of
`rocesw replay --collective` (10.1.0.1 + 2i) and sits in rack i mod RACKS, so consecutive ranks
sit in different racks and a ring crosses the CTSW stage at every hop, as in zone-2stage. Each
RTSW spreads the traffic for other racks over its CTSW uplinks by resilient ECMP; each CTSW has
a /32 per host towards its rack. Host ports answer to the anycast gateway MAC
02:00:00:00:01:00 that `rocesw gen` sends to. Lossless priorities 3 and 4 on every port.

Buffers (BUFFER_POOL sizes, bytes; docs/replay.md says where the defaults come from): RTSW a
shallow on-chip buffer (--rtsw-buffer, default 64 MiB, Tomahawk-class), CTSW a deep one
(--ctsw-buffer, default 2 GiB, Jericho-class HBM).
"""
import argparse
import ipaddress
import os
import sys

HOST_BASE = int(ipaddress.IPv4Address("10.1.0.1"))
LINK_BASE = int(ipaddress.IPv4Address("10.254.0.0"))
MAX_PORTS = 256  # RSW_MAX_PORTS


def ip(v):
    return str(ipaddress.IPv4Address(v))


def host_ip(i):
    return ip(HOST_BASE + 2 * i)


def link_ips(racks, r, c):
    """The /31 of the link between RTSW r and CTSW c: (CTSW side, RTSW side)."""
    base = LINK_BASE + 2 * (c * racks + r)
    return ip(base), ip(base + 1)


def mac(kind, n):
    return f"02:00:00:{kind:02x}:{n >> 8 & 0xff:02x}:{n & 0xff:02x}"


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B").rstrip("I")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def pools(buffer):
    return ["BUFFER_POOL:",
            f"  ingress_lossless_pool: {{size: {buffer}, type: ingress, mode: dynamic}}",
            f"  egress_lossy_pool:     {{size: {buffer}, type: egress,  mode: dynamic}}",
            f"  egress_lossless_pool:  {{size: {buffer}, type: egress,  mode: static}}"]


def ports(lines, entries, speed):
    """entries: (port, alias, role, cable_m, extra)"""
    lines.append("PORT:")
    for p, alias, role, _, extra in entries:
        lines.append(f"  {p}: {{alias: {alias}, speed: {speed}, role: {role}, mtu: 9100{extra}}}")
    lines.append("CABLE_LENGTH:")
    lines.append("  AZURE: {" + ", ".join(f"{p}: {m}m" for p, _, _, m, _ in entries) + "}")
    lines.append("PORT_QOS_MAP:")
    for p, *_ in entries:
        lines.append(f'  {p}: {{pfc_enable: "3,4"}}')


def rtsw(a, r, name):
    hosts = [i for i in range(a.racks * a.hosts) if i % a.racks == r]
    up = [f"Ethernet{8 * (a.hosts + c)}" for c in range(a.ctsws)]
    lines = [f"# RTSW {name} of {a.name}: hosts {', '.join('h%d' % i for i in hosts[:4])}"
             f"{' ...' if len(hosts) > 4 else ''} below, {a.ctsws} CTSW uplinks (scripts/gen_zone.py).",
             "DEVICE_METADATA:",
             f'  localhost: {{hostname: {name}, type: ToRRouter, mac: "{mac(0x11, r)}"}}']
    entries = [(f"Ethernet{8 * k}", f"h{i}", "host", a.host_cable, ', mac: "02:00:00:00:01:00"')
               for k, i in enumerate(hosts)]
    entries += [(p, f"ctsw{c + 1}", "uplink", a.fabric_cable, "") for c, p in enumerate(up)]
    ports(lines, entries, a.speed)
    lines += pools(a.rtsw_buffer)
    lines += ["SWITCH_HASH:",
              "  GLOBAL: {ecmp_hash: [SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT], "
              "ecmp_hash_algorithm: CRC}",
              "NEIGH:"]
    for k, i in enumerate(hosts):
        h = i.to_bytes(2, "big")
        lines.append(f'  "Ethernet{8 * k}|{host_ip(i)}": {{neigh: "02:00:00:01:{h[0]:02x}:{h[1]:02x}"}}')
    for c, p in enumerate(up):
        lines.append(f'  "{p}|{link_ips(a.racks, r, c)[0]}": {{neigh: "{mac(0x21, c)}"}}')
    members = ",".join(link_ips(a.racks, r, c)[0] for c in range(a.ctsws))
    lines += ["NEXTHOP_GROUP:",
              f'  uplinks: {{nexthop: "{members}", buckets: 1024, resilient: true}}',
              "STATIC_ROUTE:"]
    for i in hosts:
        lines.append(f'  "{host_ip(i)}/32": {{nexthop: "{host_ip(i)}"}}')
    lines.append('  "10.1.0.0/16": {nexthop_group: uplinks}')
    return lines


def ctsw(a, c, name):
    lines = [f"# CTSW {name} of {a.name}: rtsw1..rtsw{a.racks} below, a /32 per host towards its "
             "rack (scripts/gen_zone.py).",
             "DEVICE_METADATA:",
             f'  localhost: {{hostname: {name}, type: SpineRouter, mac: "{mac(0x21, c)}"}}']
    down = [f"Ethernet{8 * r}" for r in range(a.racks)]
    ports(lines, [(p, f"rtsw{r + 1}", "downlink", a.fabric_cable, "") for r, p in enumerate(down)],
          a.speed)
    lines += pools(a.ctsw_buffer)
    lines.append("NEIGH:")
    for r, p in enumerate(down):
        lines.append(f'  "{p}|{link_ips(a.racks, r, c)[1]}": {{neigh: "{mac(0x11, r)}"}}')
    lines.append("STATIC_ROUTE:")
    for i in range(a.racks * a.hosts):
        lines.append(f'  "{host_ip(i)}/32": {{nexthop: "{link_ips(a.racks, i % a.racks, c)[1]}"}}')
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--racks", type=int, required=True, help="rack switches (RTSW)")
    p.add_argument("--hosts", type=int, required=True, help="hosts per rack")
    p.add_argument("--ctsws", type=int, required=True, help="cluster switches (CTSW)")
    p.add_argument("--out", required=True, help="directory to write zone.yaml and the switch configs in")
    p.add_argument("--name", default=None, help="zone name (default zone-RxHxC)")
    p.add_argument("--speed", type=int, default=400000, help="every port's speed, Mb/s (default 400000)")
    p.add_argument("--rtsw-buffer", type=size, default=64 << 20, help="RTSW buffer pools, bytes (K/M/G; default 64M)")
    p.add_argument("--ctsw-buffer", type=size, default=2 << 30, help="CTSW buffer pools, bytes (default 2G)")
    p.add_argument("--host-cable", type=int, default=3, help="host cable length, m (default 3)")
    p.add_argument("--fabric-cable", type=int, default=40, help="RTSW-CTSW cable length, m (default 40)")
    a = p.parse_args()
    if min(a.racks, a.hosts, a.ctsws) < 1:
        p.error("--racks, --hosts and --ctsws must be at least 1")
    if a.hosts + a.ctsws > MAX_PORTS or a.racks > MAX_PORTS:
        p.error(f"a switch has at most {MAX_PORTS} ports: an RTSW needs --hosts + --ctsws, a CTSW --racks")
    if a.racks * a.hosts > 32767:
        p.error("at most 32767 hosts (10.1.0.0/16, two addresses each)")
    if a.ctsws > 256:
        p.error("at most 256 CTSWs (ECMP group members)")
    a.name = a.name or f"zone-{a.racks}x{a.hosts}x{a.ctsws}"
    os.makedirs(a.out, exist_ok=True)
    zone = [f"# {a.name}: {a.racks} RTSW x {a.hosts} hosts, {a.ctsws} CTSW, written by scripts/gen_zone.py "
            f"{' '.join(sys.argv[1:])}",
            "ZONE:", f"  name: {a.name}", "SWITCH:"]
    for r in range(a.racks):
        zone.append(f"  rtsw{r + 1}: {{config: rtsw{r + 1}.yaml}}")
    for c in range(a.ctsws):
        zone.append(f"  ctsw{c + 1}: {{config: ctsw{c + 1}.yaml}}")
    zone.append("HOST:")
    n = a.racks * a.hosts
    for i in range(n):
        zone.append(f'  h{i}: {{description: "rank {i}, {host_ip(i)}, rack rtsw{i % a.racks + 1}"}}')
    zone.append("LINK:")
    for i in range(n):
        zone.append(f'  - {{a: h{i}, b: "rtsw{i % a.racks + 1}|Ethernet{8 * (i // a.racks)}", '
                    f"length: {a.host_cable}m}}")
    for r in range(a.racks):
        for c in range(a.ctsws):
            zone.append(f'  - {{a: "rtsw{r + 1}|Ethernet{8 * (a.hosts + c)}", '
                        f'b: "ctsw{c + 1}|Ethernet{8 * r}", length: {a.fabric_cable}m}}')
    files = {"zone.yaml": zone}
    for r in range(a.racks):
        files[f"rtsw{r + 1}.yaml"] = rtsw(a, r, f"rtsw{r + 1}")
    for c in range(a.ctsws):
        files[f"ctsw{c + 1}.yaml"] = ctsw(a, c, f"ctsw{c + 1}")
    for f, lines in files.items():
        with open(os.path.join(a.out, f), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    print(f"{a.name}: {a.racks + a.ctsws} switches, {n} hosts, {n + a.racks * a.ctsws} links "
          f"in {a.out}/zone.yaml")


if __name__ == "__main__":
    main()
