"""Input: 20 RoCE frames with TTL 64, 3 with TTL 2 and 5 with TTL 1, 1 us apart, into Ethernet0."""
import lib
import rocepkt

ttls = [64] * 20 + [2] * 3 + [1] * 5
frames = [(1000 * i, rocepkt.roce(dqp=0x100 + i, psn=i, ttl=t, dst=f"10.2.0.{1 + i % 7}"))
          for i, t in enumerate(ttls)]
lib.write(lib.work("in.pcap"), frames)
