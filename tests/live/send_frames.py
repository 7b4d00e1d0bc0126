"""Sends the frames of a pcap out of eth0 (run inside a lab namespace)."""
import sys

from scapy.all import conf, rdpcap, sendp

conf.verb = 0
frames = rdpcap(sys.argv[1])
sendp(frames, iface="eth0", inter=float(sys.argv[2]) if len(sys.argv) > 2 else 0)
