"""PFC priority 3 with 0xFFFF quanta every 1 ms from 0 to 49 ms into Ethernet8; 10 data frames
(QP 0x100) at 1 ms, 10 (QP 0x200) at 30 ms and 10 (QP 0x300) at 80 ms into Ethernet0."""
import lib
import rocepkt
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

MS = 10**6
pfc = Ether(src="02:00:00:00:20:01", dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(
    c3_enabled=1, c3_pause_time=0xFFFF)
lib.write(lib.work("storm.pcap"), [(i * MS, pfc) for i in range(50)])
data = []
for qp, start in ((0x100, 1 * MS), (0x200, 30 * MS), (0x300, 80 * MS)):
    data += [(start + 1000 * i, rocepkt.roce(dqp=qp, psn=i, payload=bytes(256), dst="10.2.0.1"))
             for i in range(10)]
lib.write(lib.work("data.pcap"), data)
