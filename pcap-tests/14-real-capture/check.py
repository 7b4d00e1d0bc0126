"""Each IPv4 frame of the capture leaves the port of its destination's network with TTL - 1, a
valid IPv4 checksum (tshark), the neighbour's MAC and the router MAC, and every other byte as
captured (scapy); ARP frames are dropped as ethertype_unsupported. Frames keep their order."""
import lib

ROUTER = bytes.fromhex("020000000100")
NEIGH = {10: bytes.fromhex("020000002001"), 9: bytes.fromhex("020000001001")}
sent = [raw for _, raw in lib.frames(lib.work("in.pcap"))]
want = {"Ethernet0": [], "Ethernet8": []}
arp = 0
for raw in sent:
    if raw[12:14] == b"\x08\x06":
        arp += 1
        continue
    lib.expect(raw[12:14] == b"\x08\x00", "the capture holds ARP and IPv4 only")
    port = "Ethernet8" if raw[30:32] == bytes([10, 2]) else "Ethernet0"
    want[port].append(raw)
lib.expect(arp > 0 and all(want.values()), "both directions and ARP in the capture")
for port, frames in want.items():
    path = lib.out(port + ".pcap")
    got = [raw for _, raw in lib.frames(path)]
    lib.expect(len(got) == len(frames), f"{port}: {len(got)} frames, {len(frames)} expected")
    for g, w in zip(got, frames):
        lib.expect(g[0:6] == (NEIGH[10] if port == "Ethernet8" else NEIGH[9]) and g[6:12] == ROUTER,
                   f"{port}: MACs {g[0:12].hex()}")
        lib.expect(g[22] == w[22] - 1, "TTL - 1")
        lib.expect(g[12:22] == w[12:22] and g[23:24] == w[23:24] and g[26:] == w[26:],
                   "every other byte as captured")
    # (ICMP errors quote an IPv4 header too: tshark lists both statuses)
    status = {v for r in lib.tshark(path, ["ip.checksum.status"], prefs=["ip.check_checksum:TRUE"])
              for v in r[0].split(",")}
    lib.expect(status == {"1"}, f"{port}: tshark IPv4 checksum status {status}")
s = lib.summary()
lib.expect(s["drops"] == {"ethertype_unsupported": arp}, f"drops {s['drops']}")
lib.expect(s["conservation"]["holds"], "conservation")
