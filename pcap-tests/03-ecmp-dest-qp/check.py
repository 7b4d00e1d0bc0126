"""Destination-QP hashing (E-ECMP) with the fixed source port: the 64 QPs spread over the 4
uplinks, each carrying between 8 and 24 of them (a 1.5x bound on max/mean)."""
import lib

flows = lib.ecmp_check("dest_qp")
counts = {u: len({qp for _, _, qp in f}) for u, f in flows.items()}
lib.expect(all(8 <= c <= 24 for c in counts.values()), f"QPs per uplink {counts}")
