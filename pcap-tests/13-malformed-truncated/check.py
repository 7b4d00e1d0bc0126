from collections import Counter

import lib

with open(lib.work("expected.txt")) as f:
    expected = f.read().split()
drops = [e["reason"] for e in lib.events("drop")]
lib.expect(drops == [r for r in expected if r != "ok"], f"drop events {drops}")
s = lib.summary()
lib.expect(s["drops"] == dict(Counter(r for r in expected if r != "ok")), f"drops {s['drops']}")
sent = [raw for _, raw in lib.frames(lib.work("in.pcap"))]
got = [raw for _, raw in lib.frames(lib.out("Ethernet8.pcap"))]
good = [raw for raw, r in zip(sent, expected) if r == "ok"]
lib.expect(len(got) == len(good) and all(g[34:] == w[34:] for g, w in zip(got, good)),
           "the good frames forwarded")
lib.expect(s["conservation"]["holds"], "conservation")
