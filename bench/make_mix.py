#!/usr/bin/python3
"""RoCEv2 mix for the forwarding benchmark: RDMA WRITE data (1 KiB payload) from 64 QPs to 16
destinations, with ACKs and CNPs in between: 70 % data, 25 % ACK, 5 % CNP. Valid ICRCs."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "py"))
import rocepkt  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402


def main(path, n=4096, seed=1):
    rnd = random.Random(seed)
    frames = []
    for i in range(n):
        qp = 0x100 + rnd.randrange(64)
        dst = f"10.{2 + rnd.randrange(4)}.0.{1 + 2 * rnd.randrange(4)}"
        r = rnd.random()
        if r < 0.70:
            frames.append(rocepkt.roce(opcode=0x07, dqp=qp, psn=i, dst=dst, payload=bytes(1024)))
        elif r < 0.95:
            frames.append(rocepkt.roce(opcode=0x11, dqp=qp, psn=i, dst=dst, payload=b""))
        else:
            frames.append(rocepkt.roce(opcode=0x81, dqp=qp, dst=dst, dscp=48, payload=b""))
    wrpcap(path, frames)


if __name__ == "__main__":
    main(sys.argv[1])
