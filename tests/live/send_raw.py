"""Sends the frames of a pcap out of eth0 through an AF_PACKET socket, as fast as the kernel
takes them or with a fixed gap (run inside a lab namespace). Scapy's sendp manages a few thousand
frames a second; building a queue on a shaped port needs more.
Usage: send_raw.py PCAP [GAP_SECONDS [START_AT_EPOCH]]: with START_AT_EPOCH, several senders
started apart begin together."""
import socket
import sys
import time

from scapy.utils import RawPcapReader


def main():
    frames = [data for data, _ in RawPcapReader(sys.argv[1])]
    gap = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    start = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("eth0", 0))
    while time.time() < start:
        time.sleep(min(0.001, start - time.time()))
    for f in frames:
        s.send(f)
        if gap:
            time.sleep(gap)
    s.close()


if __name__ == "__main__":
    main()
