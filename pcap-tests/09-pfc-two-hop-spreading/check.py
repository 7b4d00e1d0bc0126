"""Checks from the captures alone: who sent PFC to whom (tshark), and that no host frame started
while the PFC frames its switch sent kept it paused: a PFC frame sent at t reaches the host whole
at t + (60 + 12) x 8 bits at 100G + 15 ns (3 m at 5 ns/m), and pauses it for time x 512 bits at
100G, or until an XON arrives (REFERENCE §2)."""
import math

import lib


def xoffs(path):
    return [int(r[0]) for r in lib.tshark(path, ["macc.cbfc.pause_time.c3"], "macc")]


lib.expect(any(xoffs(lib.out("sw2", "Ethernet0.pcap"))), "sw2 sent XOFF to sw1")
for hport, host in (("Ethernet0", "h0"), ("Ethernet8", "h1")):
    path = lib.out("sw1", hport + ".pcap")
    pfc = [(t, int.from_bytes(raw[24:26], "big")) for t, raw in lib.frames(path)
           if raw[12:14] == b"\x88\x08"]
    lib.expect(pfc and pfc[0][1] == 1000, f"sw1 sent XOFF(1000) to {host}: {pfc[:1]}")
    # each PFC frame replaces the pause state: paused from its arrival for its time, or until
    # the next frame arrives
    arrive = [t + math.ceil((60 + 12) * 8 * 1000 / 100000) + 15 for t, _ in pfc]
    paused = []
    for i, (a, (_, quanta)) in enumerate(zip(arrive, pfc)):
        end = a + quanta * 512 * 1000 // 100000
        if i + 1 < len(arrive):
            end = min(end, arrive[i + 1])
        if quanta:
            paused.append((a, end))
    sends = [t for t, _ in lib.frames(lib.out(host + ".pcap"))]
    for a, b in paused:
        bad = [t for t in sends if a < t < b]
        lib.expect(not bad, f"{host} sent at {bad[:1]} while paused {a}-{b}")
    late = [t for (t, _), (c, _) in zip(lib.frames(lib.out(host + ".pcap")),
                                         lib.frames(lib.work(host + ".pcap"))) if t > c]
    lib.expect(late, f"{host}: the pause delayed some frames")
s = lib.summary()
lib.expect(s["drops"] == {}, f"lossless: {s['drops']}")
h = {x["name"]: x for x in s["hosts"]}
sent = len(lib.frames(lib.work("h0.pcap"))) + len(lib.frames(lib.work("h1.pcap")))
lib.expect(h["h2"]["rx_packets"] == sent, f"h2 received {h['h2']['rx_packets']} of {sent}")
lib.expect(h["h0"]["pfc_rx_frames"] > 0 and h["h0"]["delayed_packets"] > 0, "h0 honoured PFC")
# the 10G port toward h2 is the bottleneck: it never idles once it started, so the last frame
# starts exactly the wire time of all frames before it after the first
dep = lib.frames(lib.out("sw2", "Ethernet8.pcap"))
busy = sum(lib.wire_ns(len(raw), 10000) for _, raw in dep[:-1])
lib.expect(abs(dep[-1][0] - dep[0][0] - busy) <= len(dep), f"bottleneck idled: {dep[-1][0] - dep[0][0]} vs {busy}")
lib.expect(s["conservation"]["holds"], "zone conservation")
