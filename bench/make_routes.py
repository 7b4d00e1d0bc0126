#!/usr/bin/python3
"""Writes a switch config with N static routes (IPv4 /24s or IPv6 /64s) whose next hops
alternate between two neighbours: the input of bench/routes.sh's scale runs.
--shift K moves every K-th route to the other neighbour (a reload's difference)."""
import argparse
import ipaddress
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("routes", type=int, help="number of static routes")
    ap.add_argument("out", help="the config file to write")
    ap.add_argument("--family", choices=("ipv4", "ipv6"), default="ipv4")
    ap.add_argument("--shift", type=int, default=0,
                    help="every K-th route uses the other next hop (0: none)")
    a = ap.parse_args()
    if a.routes < 1 or a.routes > (1 << 24):
        sys.exit("make_routes.py: routes must be 1..16777216")
    v6 = a.family == "ipv6"
    hops = ["fd00:255::1", "fd00:255::3"] if v6 else ["10.255.0.1", "10.255.0.3"]
    with open(a.out, "w") as f:
        f.write("# %d generated %s routes (bench/make_routes.py)\n" % (a.routes, a.family))
        f.write("DEVICE_METADATA:\n  localhost: {hostname: scale, mac: \"02:00:00:00:01:00\"}\n")
        f.write("PORT:\n")
        f.write("  Ethernet0:   {speed: line, role: host,   devargs: \"net_null0,no-rx=1\"}\n")
        f.write("  Ethernet256: {speed: line, role: uplink, devargs: \"net_null1,no-rx=1\"}\n")
        f.write("NEIGH:\n")
        f.write("  \"Ethernet256|%s\": {neigh: \"02:00:00:00:20:01\"}\n" % hops[0])
        f.write("  \"Ethernet256|%s\": {neigh: \"02:00:00:00:20:03\"}\n" % hops[1])
        f.write("STATIC_ROUTE:\n")
        base = int(ipaddress.IPv6Address("2001:db8::")) if v6 else int(ipaddress.IPv4Address("11.0.0.0"))
        step = 1 << 64 if v6 else 1 << 8
        plen = 64 if v6 else 24
        cls = ipaddress.IPv6Address if v6 else ipaddress.IPv4Address
        out = []
        for i in range(a.routes):
            h = i & 1
            if a.shift and i % a.shift == 0:
                h ^= 1
            out.append("  \"%s/%d\": {nexthop: \"%s\"}\n" % (cls(base + i * step), plen, hops[h]))
            if len(out) >= 65536:
                f.writelines(out)
                out = []
        f.writelines(out)


if __name__ == "__main__":
    main()
