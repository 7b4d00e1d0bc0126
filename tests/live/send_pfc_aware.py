"""Sends the frames of a pcap out of eth0 through an AF_PACKET socket, at most FPS frames a second
(a sender late for its schedule does not catch up in a burst), honouring PFC for one priority as
a RoCE NIC does: after every few frames it reads the PFC frames that arrived on eth0; an XOFF for
the priority (time > 0) stops it for time x 512 bit times at the link speed, or until an XON
(time 0). Prints the frames sent and the XOFF and XON frames seen.
Usage: send_pfc_aware.py PCAP PRIORITY LINK_MBPS FPS (run inside a lab namespace)."""
import select
import socket
import struct
import sys
import time

from scapy.utils import RawPcapReader

BATCH = 16  # frames between two looks at the receive side: the headroom covers them


def main():
    frames = [data for data, _ in RawPcapReader(sys.argv[1])]
    prio, mbps, fps = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind(("eth0", 0))
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x8808))
    rx.bind(("eth0", 0))
    rx.setblocking(False)
    paused_until, xoff, xon, sent = 0.0, 0, 0, 0

    def look(wait):
        nonlocal paused_until, xoff, xon
        if wait > 0:
            select.select([rx], [], [], wait)
        while True:
            try:
                f = rx.recv(2048)
            except BlockingIOError:
                return
            if len(f) < 34 or f[12:14] != b"\x88\x08" or f[14:16] != b"\x01\x01":
                continue
            enable = f[17]
            t = struct.unpack("!8H", f[18:34])[prio]
            if not enable & (1 << prio):
                continue
            if t:
                xoff += 1
                paused_until = time.monotonic() + t * 512 / (mbps * 1e6)
            else:
                xon += 1
                paused_until = 0.0

    due = time.monotonic()
    while sent < len(frames):
        look(0)
        while time.monotonic() < paused_until:
            look(min(0.01, paused_until - time.monotonic()))
        # the next batch's time at the rate; late (descheduled, or paused) starts a new schedule
        now = time.monotonic()
        if now < due:
            look(due - now)
            continue
        due = max(due, now - BATCH / fps) + BATCH / fps
        for f in frames[sent:sent + BATCH]:
            tx.send(f)
        sent = min(sent + BATCH, len(frames))
    look(0)
    print(sent, xoff, xon)


if __name__ == "__main__":
    main()
