"""SONiC pfcwd semantics (REFERENCE §2) with detection 10 ms, restoration 10 ms, poll 5 ms: the
queue is paused from the first PFC frame at 0, so the storm is detected at a poll between 10 and
15 ms; the last PFC frame arrives at 49 ms, so restoration comes between 59 and 64 ms. What left
Ethernet8 is read with tshark. The 10 frames queued when the storm is detected are flushed then,
and the 10 that arrive during it are refused: every one is a lossless pfcwd_drop, in the drops,
the lossless drops, the event log (at detection and at its arrival) and the queue's watchdog
counters with SONiC's names."""
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
lib.expect(s["conservation"]["lossless_drops"] == {"pfcwd_drop": 20},
           f"lossless drops {s['conservation']['lossless_drops']}")
drops = [e for e in lib.events("drop") if e["reason"] == "pfcwd_drop"]
flushed = [e for e in drops if e["t"] == det[0]]
lib.expect(len(flushed) == 10 and all(e["port"] == "Ethernet8" for e in flushed),
           f"{len(flushed)} drop events at detection")
refused = [e for e in drops if 30 * MS <= e["t"] < 31 * MS]
lib.expect(len(refused) == 10 and len(drops) == 20, f"{len(refused)} refused, {len(drops)} in all")
q3 = lib.port(s, "Ethernet8")["queues"][3]
want = {"PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": 1, "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": 1,
        "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS": 20, "PFC_WD_STATUS": "operational"}
lib.expect({k: q3.get(k) for k in want} == want, f"queue 3 watchdog {q3}")
lib.expect(all("PFC_WD_STATUS" not in q for p in s["ports"] for q in p["queues"]
               if q is not q3), "only the storming queue lists watchdog counters")
lib.expect(s["conservation"]["holds"], "conservation")
