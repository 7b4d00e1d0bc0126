"""The control frame leaves at most one bulk frame time (10G) after it arrived, overtaking every
bulk frame still queued, and leaves from queue 6 (summary). Identified in the output by tshark's
BTH opcode."""
import lib

ARRIVAL = 20000


def check(OPCODE):
    rows = lib.tshark(lib.out("Ethernet8.pcap"), ["infiniband.bth.opcode", "frame.len"])
    deps = lib.frames(lib.out("Ethernet8.pcap"))
    idx = [i for i, r in enumerate(rows) if int(r[0]) == OPCODE]
    lib.expect(len(idx) == 1, f"one control frame (opcode {OPCODE:#x}) out, got {len(idx)}")
    k = idx[0]
    t = deps[k][0]
    bulk_len = max(int(r[1]) for r in rows)
    lib.expect(ARRIVAL <= t <= ARRIVAL + lib.wire_ns(bulk_len, 10000) + 1,
               f"left at {t}, arrived at {ARRIVAL}")
    # bulk frames that started before it arrived left before it; one starting in the same ns
    # may go either side of it; every later one after it
    bulk = [tt for i, (tt, _) in enumerate(deps) if i != k]
    n_lt, n_le = sum(tt < ARRIVAL for tt in bulk), sum(tt <= ARRIVAL for tt in bulk)
    lib.expect(n_lt <= k <= n_le and len(bulk) - k > 100,
               f"{k} bulk frames left before it; {n_lt}..{n_le} had started when it arrived")
    q = lib.port(lib.summary(), "Ethernet8")["queues"]
    lib.expect(q[6]["packets"] == 1 and q[3]["packets"] == 200, f"queues {q[6]['packets']}, {q[3]['packets']}")
