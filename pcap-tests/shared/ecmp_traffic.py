"""ECMP input: 4 host pairs (10.1.0.x -> 10.2.0.x) x QPS queue pairs, 4 packets per QP, 1 us
apart. usage: ecmp_traffic.py QPS linux|fixed OUT.pcap"""
import sys

import lib
import rocepkt

qps, sport_mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
frames, t = [], 0
for psn in range(4):
    for pair in range(4):
        for q in range(qps):
            sq, dq = 0x200 + 64 * pair + q, 0x300 + 64 * pair + q
            sport = rocepkt.linux_sport(sq, dq) if sport_mode == "linux" else 49152
            frames.append((t, rocepkt.roce(src=f"10.1.0.{2 * pair + 1}", dst=f"10.2.0.{2 * pair + 1}",
                                           dqp=dq, psn=psn, sport=sport, payload=bytes(1024))))
            t += 1000
lib.write(path, frames)
