"""QP scaling, 4 QP(s) per host pair with Linux source ports under the 5-tuple: every frame on
the predicted uplink, and the uplinks used are at most min(4, flows)."""
import lib

flows = lib.ecmp_check("five_tuple")
used = sum(bool(f) for f in flows.values())
lib.expect(1 <= used <= min(4, 4 * 4), f"{used} uplinks used")
total = sum(len(f) for f in flows.values())
lib.expect(total == 4 * 4, f"{total} flows seen, {4 * 4} sent")
