"""200 bulk RDMA WRITE frames (DSCP 3, 1 KiB) back to back at 100G from t = 0, then one control
frame at 20 us: a CTS (SEND ONLY, DSCP 48) or a CNP (opcode 0x81, DSCP 3 like the data).
usage: priority_traffic.py cts|cnp OUT.pcap"""
import sys

import lib
import rocepkt

kind, path = sys.argv[1], sys.argv[2]
frames, t = [], 0
for i in range(200):
    f = rocepkt.roce(opcode=0x0A if i == 0 else 0x07, dqp=0x300, psn=i, payload=bytes(1024),
                     dst="10.2.0.1")
    frames.append((t, f))
    t += int(lib.wire_ns(len(bytes(f)), 100000)) + 1
ctl = rocepkt.roce(opcode=0x04, dqp=0x301, dscp=48, payload=bytes(16), dst="10.2.0.1") \
    if kind == "cts" else rocepkt.roce(opcode=0x81, dqp=0x302, dscp=3, payload=bytes(16), dst="10.2.0.1")
frames.append((20000, ctl))
frames.sort(key=lambda x: x[0])
lib.write(path, frames)
