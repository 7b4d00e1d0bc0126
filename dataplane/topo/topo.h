/* A zone's topology as both runs of it read it: switches, hosts, and the links between their
 * ports with their speed and delay. The live dataplane carries the links in memory rings
 * (dataplane/live/dp_link.c), replay on virtual time (dataplane/replay/); the zone loader
 * (dataplane/config/zone.c) fills these from a zone file. */
#ifndef RSW_TOPO_H
#define RSW_TOPO_H

#include <stdint.h>

struct rsw_switch;

/* the sw of a link end that is a host */
#define RSW_TOPO_HOST (-1)

/* One end of a link: port idx of switch sw, or host idx when sw is RSW_TOPO_HOST. */
struct rsw_topo_end {
	int sw;
	uint16_t idx;
};

struct rsw_topo_link {
	struct rsw_topo_end a, b;
	uint32_t speed_mbps;
	uint64_t delay_ns;   /* propagation, one way */
};

struct rsw_topo_switch {
	const char *name;
	struct rsw_switch *sw;   /* its tables and traffic manager */
};

/* A host: a NIC on one link, sending a capture (or nothing) and receiving what reaches it. */
struct rsw_topo_host {
	const char *name;
	const char *pcap;    /* replay: the capture it sends, or NULL */
};

#endif
