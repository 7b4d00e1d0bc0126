/* RoCEv2 traffic generator for collectives: per-host captures of the RDMA WRITEs a ring
 * AllReduce, an all-to-all or an N-to-1 incast puts on the wire, with QPs per connection, the
 * Linux or a fixed UDP source port, DSCP, and an optional receiver-driven mode where a
 * clear-to-send from the receiver precedes each chunk. Tree AllReduce is the binary tree over
 * ranks (parent of i is (i-1)/2): a reduce up the tree, level by level, then a broadcast down. */
#ifndef RSW_GEN_H
#define RSW_GEN_H

#include <stddef.h>
#include <stdint.h>

enum rsw_gen_pattern { RSW_GEN_RING = 0, RSW_GEN_TREE, RSW_GEN_ALL_TO_ALL, RSW_GEN_INCAST };

struct rsw_gen_cfg {
	unsigned pattern;      /* enum rsw_gen_pattern */
	unsigned hosts;        /* ranks, 2..1024 */
	uint64_t message;      /* bytes per rank: its contribution (ring, tree, all-to-all) or what
				* it sends (incast) */
	unsigned mtu;          /* RoCE MTU: payload bytes per packet (256..4096, a power of two) */
	unsigned qps;          /* QPs per connection */
	int split;             /* 1: each message split over the QPs; 0: messages round-robin */
	int fixed_sport;       /* 1: every packet from UDP port 49152; 0: Linux's port from the QPs */
	uint8_t dscp, cts_dscp;
	int receiver_driven;   /* a CTS (SEND ONLY) from the receiver precedes each chunk */
	uint32_t speed_mbps;   /* host link speed: packets are spaced by their wire time */
	uint8_t ip_base[4];    /* host i: ip_base + i * ip_stride */
	unsigned ip_stride;
	uint8_t router_mac[6]; /* destination MAC of every frame (the host's switch) */
	unsigned root;         /* incast receiver */
};

/* Host i's MAC: 02:00:00:01:hi:lo of i. */
void rsw_gen_host_mac(unsigned i, uint8_t mac[6]);
/* Writes DIR/h<i>.pcap for every host (nanosecond timestamps). Returns 0, or -1 with a message;
 * total packets written in *packets. */
int rsw_gen_write(const struct rsw_gen_cfg *cfg, const char *dir, uint64_t *packets, char *err,
		  size_t errlen);

/* Parses `rocesw gen` arguments (argv[0] is the command name). Returns 0, 1 after printing the
 * help, or 2 after printing what was wrong. With need_out 0, --out may be left out. */
int rsw_gen_parse(int argc, char **argv, struct rsw_gen_cfg *cfg, const char **out_dir,
		  int need_out);

#endif
