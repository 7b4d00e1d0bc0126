import lib

for port in ("Ethernet0", "Ethernet8"):
    rows = lib.tshark(lib.out(port + ".pcap"), ["macc.cbfc.enbv", "macc.cbfc.pause_time.c3"])
    lib.expect(len(rows) >= 2, f"{port}: {len(rows)} PFC frames")
    lib.expect(int(rows[0][0], 0) == 0x08 and int(rows[0][1]) == 1000, f"{port}: first {rows[0]}")
    lib.expect(int(rows[-1][1]) == 0, f"{port}: last is XON, got {rows[-1]}")
    lib.expect(all(int(r[0], 0) == 0x08 for r in rows), "only priority 3")
# the receiver's pause: 1000 quanta x 512 bits at 10 Gb/s = 51200 ns from its arrival (the
# frame is whole at 50000 ns, its timestamp)
start, end = 50000, 50000 + 1000 * 512 * 1000 // 10000
dep = [t for t, _ in lib.frames(lib.out("Ethernet16.pcap"))]
inside = [t for t in dep if start < t < end]
lib.expect(not inside, f"{len(inside)} frames started while paused, first at {inside[:1]}")
after = [t for t in dep if t >= end]
lib.expect(after and after[0] == end, f"sending resumes when the pause ends: {after[:1]} vs {end}")
s = lib.summary()
lib.expect(s["drops"] == {}, f"lossless: nothing dropped, got {s['drops']}")
lib.expect(lib.port(s, "Ethernet16")["pfc"]["SAI_PORT_STAT_PFC_3_RX_PKTS"] == 1, "PFC counted")
