"""SONiC pfcwd semantics (REFERENCE §2) with detection 10 ms, restoration 10 ms, poll 5 ms: the
queue is paused from the first PFC frame at 0, so the storm is detected at a poll between 10 and
15 ms; the last PFC frame arrives at 49 ms, so restoration comes between 59 and 64 ms. What left
Ethernet8 is read with tshark."""
import lib

MS = 10**6
wd = lib.events("pfcwd")
det = [e["t"] for e in wd if "storm detected on Ethernet8 queue 3, action drop" in e["message"]]
res = [e["t"] for e in wd if "storm restored on Ethernet8 queue 3" in e["message"]]
lib.expect(len(det) == 1 and 10 * MS <= det[0] <= 15 * MS, f"detected at {det}")
lib.expect(len(res) == 1 and 59 * MS <= res[0] <= 64 * MS, f"restored at {res}")
qps = [int(r[0], 16) for r in lib.tshark(lib.out("Ethernet8.pcap"), ["infiniband.bth.destqp"],
                                         "infiniband")]
lib.expect(qps.count(0x100) == 0, "queued during the storm: flushed")
lib.expect(qps.count(0x200) == 0, "sent during the storm: dropped")
lib.expect(qps.count(0x300) == 10, f"after restoration all 10 forwarded, got {qps.count(0x300)}")
s = lib.summary()
lib.expect(s["drops"] == {"pfcwd_drop": 20}, f"drops {s['drops']}")
lib.expect(s["conservation"]["holds"], "conservation")
