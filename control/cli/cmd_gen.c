/* `rocesw gen`: per-host captures of the RoCEv2 traffic of a collective. */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dataplane/tables/table_types.h"
#include "gen.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw gen --pattern ring|tree|all-to-all|incast --hosts N --out DIR\n"
		"                  [--message BYTES] [--mtu BYTES] [--qps Q] [--qp-mode rr|split]\n"
		"                  [--sport linux|fixed] [--dscp D] [--receiver-driven] [--cts-dscp D]\n"
		"                  [--speed MBPS] [--ip-base A.B.C.D] [--ip-stride S]\n"
		"                  [--router-mac MAC] [--root I]\n"
		"\n"
		"Writes DIR/h0.pcap .. h<N-1>.pcap: the RDMA WRITEs (RC, RETH on the first packet,\n"
		"valid IPv4 checksum and ICRC, ECT(0)) each host sends, with nanosecond timestamps\n"
		"spaced by the wire time at --speed. docs/gen.md describes the patterns.\n"
		"\n"
		"  --pattern P       ring: ring AllReduce, 2(N-1) steps of message/N to the next rank;\n"
		"                    tree: binary-tree AllReduce, message up to the parent level by\n"
		"                    level, then down; all-to-all: message/N to every other rank;\n"
		"                    incast: every rank\n"
		"                    but --root sends message to it\n"
		"  --message BYTES   per rank (default 1048576)\n"
		"  --mtu BYTES       RoCE MTU, payload per packet: 256..4096, power of two (4096)\n"
		"  --qps Q           QPs per connection (default 1, at most 64)\n"
		"  --qp-mode M       rr: messages round-robin over the QPs (default); split: each\n"
		"                    message split evenly over them\n"
		"  --sport S         linux: the UDP source port Linux derives from the QP numbers\n"
		"                    (default); fixed: 49152 for every packet\n"
		"  --dscp D          data DSCP (default 3, the lossless class of SONiC's AZURE map)\n"
		"  --receiver-driven before each step, every receiver sends a clear-to-send (SEND\n"
		"                    ONLY, 16 bytes) per chunk to its sender on --cts-dscp (default 48)\n"
		"  --speed MBPS      host link speed (default 400000)\n"
		"  --ip-base/--ip-stride  host i is ip-base + i*stride (default 10.1.0.1, 2)\n"
		"  --router-mac MAC  destination MAC of every frame (default 02:00:00:00:01:00)\n");
}

static int num(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	       unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	if (!*s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "rocesw gen: --%s expects a number %lu..%lu, got '%s'\n", opt, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

static const struct {
	const char *name;
	enum rsw_gen_pattern pattern;
} patterns[] = {
	{"ring", RSW_GEN_RING},
	{"tree", RSW_GEN_TREE},
	{"all-to-all", RSW_GEN_ALL_TO_ALL},
	{"incast", RSW_GEN_INCAST},
};

static int pattern_of(const char *name, unsigned *out)
{
	for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++)
		if (!strcmp(name, patterns[k].name)) {
			*out = patterns[k].pattern;
			return 0;
		}
	return -1;
}

static const struct option gen_options[] = {
	{"pattern", required_argument, NULL, 'p'}, {"hosts", required_argument, NULL, 'n'},
	{"out", required_argument, NULL, 'o'}, {"message", required_argument, NULL, 'm'},
	{"mtu", required_argument, NULL, 'M'}, {"qps", required_argument, NULL, 'q'},
	{"qp-mode", required_argument, NULL, 'Q'}, {"sport", required_argument, NULL, 's'},
	{"dscp", required_argument, NULL, 'd'}, {"receiver-driven", no_argument, NULL, 'r'},
	{"cts-dscp", required_argument, NULL, 'c'}, {"speed", required_argument, NULL, 'S'},
	{"ip-base", required_argument, NULL, 'i'}, {"ip-stride", required_argument, NULL, 't'},
	{"router-mac", required_argument, NULL, 'R'}, {"root", required_argument, NULL, 'x'},
	{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
};

/* Takes one option into c (--out into *out). Returns -1 to go on, or what rsw_gen_parse
 * returns. */
static int take_option(struct rsw_gen_cfg *c, int ch, const char **out, int *have_pattern)
{
	unsigned long v;
	switch (ch) {
	case 'p':
		*have_pattern = 1;
		if (pattern_of(optarg, &c->pattern) < 0) {
			fprintf(stderr, "rocesw gen: --pattern expects ring, tree, all-to-all or "
				"incast, got '%s'\n", optarg);
			return 2;
		}
		break;
	case 'n': if (num("hosts", optarg, 2, 512, &v) < 0) return 2; c->hosts = (unsigned)v; break;
	case 'o': *out = optarg; break;
	case 'm':
		if (num("message", optarg, 1, 1ul << 36, &v) < 0)
			return 2;
		c->message = v;
		break;
	case 'M':
		if (num("mtu", optarg, 256, 4096, &v) < 0 || (v & (v - 1))) {
			fprintf(stderr, "rocesw gen: --mtu must be 256, 512, 1024, 2048 or 4096\n");
			return 2;
		}
		c->mtu = (unsigned)v;
		break;
	case 'q': if (num("qps", optarg, 1, 64, &v) < 0) return 2; c->qps = (unsigned)v; break;
	case 'Q':
		if (strcmp(optarg, "rr") && strcmp(optarg, "split")) {
			fprintf(stderr, "rocesw gen: --qp-mode expects rr or split\n");
			return 2;
		}
		c->split = !strcmp(optarg, "split");
		break;
	case 's':
		if (strcmp(optarg, "linux") && strcmp(optarg, "fixed")) {
			fprintf(stderr, "rocesw gen: --sport expects linux or fixed\n");
			return 2;
		}
		c->fixed_sport = !strcmp(optarg, "fixed");
		break;
	case 'd': if (num("dscp", optarg, 0, 63, &v) < 0) return 2; c->dscp = (uint8_t)v; break;
	case 'c':
		if (num("cts-dscp", optarg, 0, 63, &v) < 0)
			return 2;
		c->cts_dscp = (uint8_t)v;
		break;
	case 'r': c->receiver_driven = 1; break;
	case 'S':
		if (num("speed", optarg, 1, 1600000, &v) < 0)
			return 2;
		c->speed_mbps = (uint32_t)v;
		break;
	case 'i':
		if (inet_pton(AF_INET, optarg, c->ip_base) != 1) {
			fprintf(stderr, "rocesw gen: --ip-base expects an IPv4 address\n");
			return 2;
		}
		break;
	case 't':
		if (num("ip-stride", optarg, 1, 65536, &v) < 0)
			return 2;
		c->ip_stride = (unsigned)v;
		break;
	case 'R':
		if (rsw_mac_parse(optarg, c->router_mac) < 0) {
			fprintf(stderr, "rocesw gen: --router-mac expects a MAC address\n");
			return 2;
		}
		break;
	case 'x': if (num("root", optarg, 0, 511, &v) < 0) return 2; c->root = (unsigned)v; break;
	case 'h': usage(stdout); return 1;
	default: usage(stderr); return 2;
	}
	return -1;
}

int rsw_gen_parse(int argc, char **argv, struct rsw_gen_cfg *cfg, const char **out_dir,
		  int need_out)
{
	struct rsw_gen_cfg c = {.pattern = RSW_GEN_RING, .message = 1048576, .mtu = 4096, .qps = 1,
				.dscp = 3, .cts_dscp = 48, .speed_mbps = 400000,
				.ip_base = {10, 1, 0, 1}, .ip_stride = 2,
				.router_mac = {0x02, 0, 0, 0, 0x01, 0}};
	const char *out = NULL;
	int have_pattern = 0, ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", gen_options, NULL)) != -1)
		if ((rc = take_option(&c, ch, &out, &have_pattern)) >= 0)
			return rc;
	if (!have_pattern || !c.hosts || (need_out && !out) || optind < argc) {
		fprintf(stderr, "rocesw gen: give --pattern, --hosts%s\n", need_out ? " and --out" : "");
		usage(stderr);
		return 2;
	}
	if (c.root >= c.hosts) {
		fprintf(stderr, "rocesw gen: --root %u: there are %u hosts\n", c.root, c.hosts);
		return 2;
	}
	*cfg = c;
	*out_dir = out;
	return 0;
}

int rsw_cmd_gen(int argc, char **argv)
{
	struct rsw_gen_cfg c;
	const char *out;
	int rc = rsw_gen_parse(argc, argv, &c, &out, 1);
	if (rc)
		return rc == 1 ? 0 : rc;
	char err[1024];
	uint64_t packets;
	if (rsw_gen_write(&c, out, &packets, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw gen: %s\n", err);
		return 1;
	}
	printf("%s: %u hosts, %lu packets\n", out, c.hosts, (unsigned long)packets);
	return 0;
}
