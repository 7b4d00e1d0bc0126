import lib
import rocepkt

sent = lib.frames(lib.work("in.pcap"))
got = lib.frames(lib.out("Ethernet8.pcap"))
forwarded = [raw for _, raw in sent if raw[22] > 1]
lib.expect(len(got) == len(forwarded) == 23, f"{len(got)} frames out, 23 expected")
ttl = lib.tshark(lib.out("Ethernet8.pcap"), ["ip.ttl", "ip.checksum.status", "eth.src", "eth.dst"],
                 prefs=["ip.check_checksum:TRUE"])
for (t, status, src, dst), raw_in in zip(ttl, forwarded):
    lib.expect(int(t) == raw_in[22] - 1, f"TTL {t}, expected {raw_in[22] - 1}")
    lib.expect(status == "1", "tshark: IPv4 header checksum good after the TTL rewrite")
    lib.expect((src, dst) == ("02:00:00:00:01:00", "02:00:00:00:20:01"), f"MACs {src} {dst}")
for (_, raw), raw_in in zip(got, forwarded):
    lib.expect(raw[34:] == raw_in[34:], "UDP, BTH, payload and ICRC unchanged")
    lib.expect(rocepkt.icrc(raw[14:]) == raw[-4:], "ICRC still valid (it excludes the TTL)")
s = lib.summary()
lib.expect(s["drops"] == {"ttl_expired": 5}, f"drops {s['drops']}")
lib.expect(s["conservation"]["holds"], "conservation")
