"""5-tuple hashing with the fixed source port 49152: each host pair's 16 QPs are one 5-tuple, so
all of a pair's frames leave on one uplink."""
import lib

flows = lib.ecmp_check("five_tuple")
for u, fl in flows.items():
    pairs = {src_dst for src_dst, _, _ in fl}
    for p in pairs:
        others = [v for v, f in flows.items() if v != u and any(x[0] == p for x in f)]
        lib.expect(not others, f"host pair {p.hex()} split over {u} and {others}")
lib.expect(sum(bool(f) for f in flows.values()) <= 4, "at most one uplink per pair")
