"""The queue's bytes when a packet leaves, this packet included, are the bytes that arrived by
then minus those that left before it (arrival = input timestamp, departure = output timestamp).
The packet is CE iff that is more than Kmin = 20000 (REFERENCE §3, WRED with Kmin = Kmax)."""
import lib

KMIN = 20000
arrivals = sorted(lib.frames(lib.work("h0.pcap")) + lib.frames(lib.work("h1.pcap")))
out = lib.out("Ethernet16.pcap")
departed = lib.frames(out)
ecn = [int(r[0]) for r in lib.tshark(out, ["ip.dsfield.ecn"])]
lib.expect(len(ecn) == len(departed) == len(arrivals), "every packet left")
left, ties, wrong = 0, 0, []
for k, ((t, raw), e) in enumerate(zip(departed, ecn)):
    arrived = sum(len(a) for ta, a in arrivals if ta <= t)
    q = arrived - left
    if any(ta == t for ta, _ in arrivals):
        ties += 1  # an arrival at the same ns may be counted either side
    elif (e == 3) != (q > KMIN):
        wrong.append((k, q, e))
    left += len(raw)
lib.expect(not wrong, f"CE disagrees with the queue depth at departure: {wrong[:5]}")
lib.expect(ties <= 2, f"{ties} departures tie with an arrival")
marked = sum(e == 3 for e in ecn)
lib.expect(marked > 0 and ecn[0] == 2, "the first packet (empty queue) keeps ECT(0); later ones CE")
q3 = lib.port(lib.summary(), "Ethernet16")["queues"][3]
lib.expect(q3["ecn_marked_packets"] == marked, f"summary {q3['ecn_marked_packets']} marks, tshark {marked}")
lib.expect(lib.events("ecn_mark").__len__() == marked, "one ecn_mark event per CE packet")
# a queue-depth sample at t is the queue before anything of t happened: the bytes that arrived
# before t less those that left before t (and only non-empty queues are listed)
samples = [e for e in lib.events("queue_depth") if e["port"] == "Ethernet16" and e["queue"] == 3]
lib.expect(len(samples) > 0, "Ethernet16 q3 was sampled")


def held(t):
    return sum(len(a) for ta, a in arrivals if ta < t) - sum(len(d) for td, d in departed if td < t)


bad = [(e["t"], e["bytes"], held(e["t"])) for e in samples if held(e["t"]) != e["bytes"]]
lib.expect(not bad, f"samples (t, bytes, arrived less left before t) disagree: {bad[:5]}")
# ... and every period start at which it held something has its sample, whether or not
# anything happened in that period (the port runs at 10G, a frame 3.3 µs on its wire: most
# periods have no event)
at = {e["t"] for e in samples}
missing = [t for t in range(0, departed[-1][0] + 1000, 1000) if held(t) > 0 and t not in at]
lib.expect(not missing, f"period starts with bytes held but no sample: {missing[:5]}")
lib.expect(all(e["t"] % 1000 == 0 for e in lib.events("queue_depth")),
           "samples at the start of a --sample-ns 1000 period")
