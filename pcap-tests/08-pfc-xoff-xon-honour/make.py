"""The receiver's PFC: priority 3 paused for 1000 quanta, arriving at 50 us on Ethernet16."""
import lib
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

pfc = Ether(src="02:00:00:01:00:02", dst="01:80:c2:00:00:01") / MACControlClassBasedFlowControl(
    c3_enabled=1, c3_pause_time=1000)
lib.write(lib.work("peer.pcap"), [(50000, pfc)])
