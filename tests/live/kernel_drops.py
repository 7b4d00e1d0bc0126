"""Where the kernel lost frames a host sent before the switch read them: the counters a live test
reads to tell the three places of a veth "cable" apart when a frame reached no switch counter.

- the sending CPU's receive backlog: a veth queues what its peer sends on that CPU's backlog
  (net.core.netdev_max_backlog); when it is full the frame is dropped there (the second column
  of /proc/net/softnet_stat, system-wide, so a test reads it before and after);
- the veth itself: a frame its peer's backlog refused is counted as dropped on the veth pair;
- the switch's af_packet receive ring: full when the worker has not read it for a while (off
  its CPU). net_af_packet in DPDK 22.11 does not read these drops (its rx_missed stays 0), so
  the test borrows each of the dataplane's packet sockets on the port with pidfd_getfd(2) and
  reads PACKET_STATISTICS (which resets them: read once, at the end)."""
import ctypes
import json
import os
import socket
import struct

from labnet import _libc, sh

SOL_PACKET = 263
PACKET_STATISTICS = 6
SYS_PIDFD_GETFD = 438  # x86-64 and the generic syscall table alike


def backlog_drops():
    """Frames dropped so far because a CPU's receive backlog was full, summed over the CPUs."""
    with open("/proc/net/softnet_stat") as f:
        return sum(int(line.split()[1], 16) for line in f)


def link_stats(dev, ns=None):
    """(rx_packets, rx_dropped, tx_packets, tx_dropped) of a link, as `ip -s link` shows them."""
    st = json.loads(sh("ip", "-j", "-s", "link", "show", "dev", dev, ns=ns).stdout)[0]
    rx, tx = st["stats64"]["rx"], st["stats64"]["tx"]
    return rx["packets"], rx["dropped"], tx["packets"], tx["dropped"]


def ring_stats(pid, dev):
    """(frames offered, frames dropped because the ring was full) of the af_packet receive rings
    process `pid` has on `dev` (in the test's own namespace), since the sockets were made or
    last read: PACKET_STATISTICS summed over the sockets (tp_packets counts the drops too)."""
    with open(f"/sys/class/net/{dev}/ifindex") as f:
        ifindex = int(f.read())
    inodes = set()
    with open("/proc/net/packet") as f:
        next(f)  # sk RefCnt Type Proto Iface R Rmem User Inode
        for cols in (line.split() for line in f):
            if int(cols[4]) == ifindex:
                inodes.add(f"socket:[{cols[8]}]")
    offered = drops = 0
    pidfd = os.pidfd_open(pid)
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") not in inodes:
                    continue
            except OSError:  # closed meanwhile
                continue
            mine = _libc.syscall(SYS_PIDFD_GETFD, pidfd, int(fd), 0)
            if mine < 0:
                raise OSError(ctypes.get_errno(), f"pidfd_getfd {pid}/{fd}")
            s = socket.socket(fileno=mine)
            try:
                # struct tpacket_stats: tp_packets, tp_drops (the v3 struct starts the same)
                n, d = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
                offered, drops = offered + n, drops + d
            finally:
                s.close()  # our duplicate only: the dataplane's socket stays open
    finally:
        os.close(pidfd)
    return offered, drops


class Cable:
    """The counters of one host link (`switch_if` in the root namespace, eth0 in `ns`) from
    before the traffic on, while the dataplane `pid` runs."""

    DROPS = ("host eth0 tx_dropped", "receive backlog dropped (all CPUs)", "switch end rx_dropped",
             "af_packet ring dropped")

    def __init__(self, pid, switch_if, ns):
        self.pid, self.switch_if, self.ns = pid, switch_if, ns
        self.backlog0 = backlog_drops()
        self.links0 = link_stats("eth0", ns) + link_stats(switch_if)
        self.offered = self.ring_dropped = 0  # PACKET_STATISTICS restarts at each read

    def counts(self):
        """{place: frames counted there since this object was made}: the frames the host's eth0
        sent, those the switch's end received, those its af_packet sockets were offered, and
        the drops at each place on the way (DROPS)."""
        d = [b - a for a, b in
             zip(self.links0, link_stats("eth0", self.ns) + link_stats(self.switch_if))]
        offered, dropped = ring_stats(self.pid, self.switch_if)
        self.offered += offered
        self.ring_dropped += dropped
        return {"host eth0 tx_packets": d[2], "host eth0 tx_dropped": d[3],
                "receive backlog dropped (all CPUs)": backlog_drops() - self.backlog0,
                "switch end rx_packets": d[4], "switch end rx_dropped": d[5],
                "af_packet offered": self.offered, "af_packet ring dropped": self.ring_dropped}

    def dropped(self):
        """Frames the kernel dropped on the cable so far."""
        c = self.counts()
        return sum(c[k] for k in self.DROPS)
