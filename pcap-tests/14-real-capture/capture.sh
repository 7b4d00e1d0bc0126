#!/usr/bin/env bash
# Makes real.pcap: real Linux kernel traffic between two network namespaces (ARP, ICMP echo from a raw socket, a
# TCP connection carrying 64 KiB, UDP datagrams), captured by tcpdump with nanosecond timestamps
# on host A's side of a veth pair. IPv6 is off so the capture holds only ARP and IPv4. The
# capture is committed because real traffic differs on every run (IDs, timestamps, ports).
# Needs root. usage: capture.sh OUT.pcap
set -euo pipefail
out=$(realpath -m "${1:?usage: capture.sh OUT.pcap}")
a=rsw-cap-a-$$ b=rsw-cap-b-$$
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$a"; ip netns add "$b"
ip link add veth-a netns "$a" address 02:00:00:00:10:01 type veth peer name veth-b netns "$b" \
  address 02:00:00:00:20:01
for ns in "$a" "$b"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip netns exec "$ns" ip link set lo up
done
ip netns exec "$a" ip addr add 10.1.0.1/16 dev veth-a
ip netns exec "$b" ip addr add 10.2.0.1/16 dev veth-b
# no segmentation offloads: the capture holds the frames a wire would carry
for x in "$a veth-a" "$b veth-b"; do
  set -- $x
  ip netns exec "$1" /usr/sbin/ethtool -K "$2" tso off gso off gro off tx off >/dev/null
done
ip netns exec "$a" ip link set veth-a up
ip netns exec "$b" ip link set veth-b up
ip netns exec "$a" ip route add 10.2.0.0/16 dev veth-a
ip netns exec "$b" ip route add 10.1.0.0/16 dev veth-b
ip netns exec "$a" tcpdump -i veth-a -w "$out" --time-stamp-precision nano -U -q 2>/dev/null &
dump=$!
sleep 1
# ICMP echo requests from a raw socket; host B's kernel answers them
ip netns exec "$a" /usr/bin/python3 -c '
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
for seq in range(5):
    body = struct.pack("!BBHHH", 8, 0, 0, 0x1234, seq) + bytes(56)
    c = sum(struct.unpack("!%dH" % (len(body) // 2), body)); c = (c >> 16) + (c & 0xFFFF)
    c = ~(c + (c >> 16)) & 0xFFFF
    s.sendto(body[:2] + struct.pack("!H", c) + body[4:], ("10.2.0.1", 0)); s.recv(200)
    time.sleep(0.2)'
ip netns exec "$b" /usr/bin/python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.2.0.1", 5001)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    d = c.recv(65536)
    if not d: break
    n += len(d)
c.sendall(str(n).encode()); c.close()' &
srv=$!
sleep 0.5
ip netns exec "$a" /usr/bin/python3 -c '
import socket
c = socket.create_connection(("10.2.0.1", 5001)); c.sendall(bytes(range(256)) * 256)
c.shutdown(socket.SHUT_WR); print(c.recv(100).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10): u.sendto(bytes([i]) * (100 + 50 * i), ("10.2.0.1", 9000 + i))' >/dev/null
wait "$srv"
sleep 0.5
kill "$dump"; wait "$dump" 2>/dev/null || true
