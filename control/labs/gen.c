#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataplane/pkt/roce_build.h"
#include "dataplane/tm/shaper.h"
#include "gen.h"

#define QPN_BASE 0x100u
#define STEP_GAP_NS 2000u  /* between the end of a step and the next: a round trip, roughly */
#define CTS_LEAD_NS 1000u  /* from the last CTS of a step to the first data it allows */
#define CTS_PAYLOAD 16u

void rsw_gen_host_mac(unsigned i, uint8_t mac[6])
{
	const uint8_t m[6] = {0x02, 0, 0, 0x01, (uint8_t)(i >> 8), (uint8_t)i};
	memcpy(mac, m, 6);
}

static void host_ip(const struct rsw_gen_cfg *c, unsigned i, uint8_t ip[4])
{
	uint32_t v = (uint32_t)c->ip_base[0] << 24 | (uint32_t)c->ip_base[1] << 16 |
		     (uint32_t)c->ip_base[2] << 8 | c->ip_base[3];
	v += i * c->ip_stride;
	ip[0] = (uint8_t)(v >> 24);
	ip[1] = (uint8_t)(v >> 16);
	ip[2] = (uint8_t)(v >> 8);
	ip[3] = (uint8_t)v;
}

/* QP number at host `at` for its connection with `peer`, QP q. */
static uint32_t qpn(const struct rsw_gen_cfg *c, unsigned peer, unsigned q)
{
	return (QPN_BASE + peer * c->qps + q) & 0xFFFFFF;
}

struct part {          /* one message (or a QP's share of it) in a step */
	unsigned src, dst, q;
	uint64_t bytes, sent;
	uint32_t npkts, done;
};

struct gen {
	const struct rsw_gen_cfg *c;
	pcap_dumper_t **out;
	uint64_t *clock;        /* per host: when its link is free */
	uint32_t **psn;         /* per src: [dst * qps + q], allocated on first use */
	uint32_t **msgs;        /* per src: messages sent per dst (round-robin QP choice) */
	uint64_t packets;
	uint8_t frame[RSW_ROCE_BUILD_OVERHEAD + 4096];
};

static int emit(struct gen *g, unsigned host, const struct rsw_roce_spec *s)
{
	size_t len = rsw_roce_build(g->frame, sizeof(g->frame), s);
	if (!len)
		return -1;
	struct pcap_pkthdr h;
	uint64_t t = g->clock[host];
	h.ts.tv_sec = (time_t)(t / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000u); /* nanoseconds: the file says so */
	h.caplen = h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)g->out[host], &h, g->frame);
	/* the next frame leaves after this one's wire time (FCS, preamble, IFG included) */
	g->clock[host] += rsw_wire_ns((uint32_t)len, g->c->speed_mbps);
	g->packets++;
	return 0;
}

static void spec_common(const struct gen *g, unsigned src, unsigned dst, unsigned q,
			struct rsw_roce_spec *s)
{
	const struct rsw_gen_cfg *c = g->c;
	memset(s, 0, sizeof(*s));
	memcpy(s->dmac, c->router_mac, 6);
	rsw_gen_host_mac(src, s->smac);
	host_ip(c, src, s->src_ip);
	host_ip(c, dst, s->dst_ip);
	s->ecn = 2; /* ECT(0), as DCQCN NICs send */
	s->ttl = 64;
	s->dest_qp = qpn(c, src, q);
	s->sport = c->fixed_sport ? 49152 : rsw_roce_linux_sport(qpn(c, dst, q), s->dest_qp);
}

/* The next data packet of a part. */
static int send_data(struct gen *g, struct part *p)
{
	const struct rsw_gen_cfg *c = g->c;
	struct rsw_roce_spec s;
	spec_common(g, p->src, p->dst, p->q, &s);
	s.dscp = c->dscp;
	uint32_t *psn = &g->psn[p->src][p->dst * c->qps + p->q];
	uint64_t left = p->bytes - p->sent;
	s.payload = (uint32_t)(left < c->mtu ? left : c->mtu);
	int first = p->done == 0, last = p->done + 1 == p->npkts;
	s.opcode = first && last ? 0x0A : first ? 0x06 : last ? 0x08 : 0x07; /* RDMA WRITE */
	if (first) {
		s.va = 0x10000000ull * (p->q + 1);
		s.rkey = 0x1000 + p->src;
		s.dma_len = (uint32_t)p->bytes;
	}
	s.ackreq = (uint8_t)last;
	s.psn = (*psn)++ & 0xFFFFFF;
	p->sent += s.payload;
	p->done++;
	return emit(g, p->src, &s);
}

/* Clear-to-send for a part: a SEND ONLY from the receiver to the sender's QP. */
static int send_cts(struct gen *g, const struct part *p)
{
	struct rsw_roce_spec s;
	spec_common(g, p->dst, p->src, p->q, &s);
	s.dscp = g->c->cts_dscp;
	s.opcode = 0x04;
	s.payload = CTS_PAYLOAD;
	uint32_t *psn = &g->psn[p->dst][p->src * g->c->qps + p->q];
	s.psn = (*psn)++ & 0xFFFFFF;
	return emit(g, p->dst, &s);
}

static int ensure_src(struct gen *g, unsigned src)
{
	const struct rsw_gen_cfg *c = g->c;
	if (!g->psn[src])
		g->psn[src] = calloc((size_t)c->hosts * c->qps, sizeof(uint32_t));
	if (!g->msgs[src])
		g->msgs[src] = calloc(c->hosts, sizeof(uint32_t));
	return g->psn[src] && g->msgs[src] ? 0 : -1;
}

/* Adds the parts of a transfer (src → dst, bytes) to list. */
static int add_transfer(struct gen *g, unsigned src, unsigned dst, uint64_t bytes, struct part **list,
			size_t *n, size_t *cap)
{
	const struct rsw_gen_cfg *c = g->c;
	if (ensure_src(g, src) < 0 || ensure_src(g, dst) < 0)
		return -1;
	unsigned parts = c->split ? c->qps : 1;
	for (unsigned k = 0; k < parts; k++) {
		uint64_t b = bytes / parts + (k < bytes % parts);
		if (!b)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			void *q = realloc(*list, nc * sizeof(**list));
			if (!q)
				return -1;
			*list = q;
			*cap = nc;
		}
		struct part *p = &(*list)[(*n)++];
		p->src = src;
		p->dst = dst;
		p->q = c->split ? k : g->msgs[src][dst]++ % c->qps;
		p->bytes = b;
		p->sent = 0;
		p->done = 0;
		p->npkts = (uint32_t)((b + c->mtu - 1) / c->mtu);
	}
	return 0;
}

/* One step: optional CTS phase, then every host sends its parts, packet by packet in turn. */
static int run_step(struct gen *g, struct part *parts, size_t n, uint64_t start)
{
	const struct rsw_gen_cfg *c = g->c;
	for (unsigned h = 0; h < c->hosts; h++)
		g->clock[h] = start;
	if (c->receiver_driven) {
		uint64_t data_start = start;
		for (size_t i = 0; i < n; i++)
			if (send_cts(g, &parts[i]) < 0)
				return -1;
		for (unsigned h = 0; h < c->hosts; h++)
			if (g->clock[h] > data_start)
				data_start = g->clock[h];
		data_start += CTS_LEAD_NS;
		for (unsigned h = 0; h < c->hosts; h++)
			g->clock[h] = data_start;
	}
	for (int more = 1; more;) {
		more = 0;
		for (size_t i = 0; i < n; i++) {
			if (parts[i].done == parts[i].npkts)
				continue;
			if (send_data(g, &parts[i]) < 0)
				return -1;
			more = 1;
		}
	}
	return 0;
}

/* Depth of rank i in the binary tree (root 0 at depth 0). */
static unsigned level(unsigned i)
{
	unsigned l = 0;
	for (i++; i > 1; i >>= 1)
		l++;
	return l;
}

/* Step s's transfers of the pattern into list (n of them). -1: no memory. */
static int step_transfers(struct gen *g, unsigned s, unsigned depth, struct part **list,
			  size_t *n, size_t *cap)
{
	const struct rsw_gen_cfg *c = g->c;
	*n = 0;
	for (unsigned i = 0; i < c->hosts; i++) {
		int r = 0;
		if (c->pattern == RSW_GEN_RING)
			r = add_transfer(g, i, (i + 1) % c->hosts, c->message / c->hosts, list, n, cap);
		else if (c->pattern == RSW_GEN_TREE && i > 0) {
			/* reduce: the deepest level first; then broadcast from the top */
			unsigned lvl = s < depth ? depth - s : s - depth + 1;
			if (level(i) == lvl && s < depth)
				r = add_transfer(g, i, (i - 1) / 2, c->message, list, n, cap);
			else if (level(i) == lvl)
				r = add_transfer(g, (i - 1) / 2, i, c->message, list, n, cap);
		}
		else if (c->pattern == RSW_GEN_ALL_TO_ALL)
			for (unsigned k = 1; k < c->hosts && r == 0; k++)
				r = add_transfer(g, i, (i + k) % c->hosts, c->message / c->hosts, list,
						 n, cap);
		else if (i != c->root)
			r = add_transfer(g, i, c->root, c->message, list, n, cap);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Closes every capture. pcap_dump reports no failed write: a flush does. A set of captures
 * with one cut short (a full disk) is removed whole, never left as if complete. Returns rc, or
 * -1 (err written) if a flush failed. */
static int close_captures(struct gen *g, const char *dir, int rc, char *err, size_t errlen)
{
	const struct rsw_gen_cfg *c = g->c;
	for (unsigned h = 0; g->out && h < c->hosts; h++) {
		if (!g->out[h])
			continue;
		FILE *f = pcap_dump_file(g->out[h]);
		if ((fflush(f) != 0 || ferror(f)) && rc == 0) {
			snprintf(err, errlen, "cannot write %s/h%u.pcap: %s (this run's captures "
				 "removed)", dir, h, strerror(errno ? errno : EIO));
			rc = -1;
		}
		pcap_dump_close(g->out[h]);
	}
	for (unsigned h = 0; rc < 0 && g->out && h < c->hosts; h++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/h%u.pcap", dir, h);
		if (g->out[h])
			unlink(path);
	}
	return rc;
}

/* The per-host writers and counters it allocates share the one cleanup at out:. */
int rsw_gen_write(const struct rsw_gen_cfg *c, const char *dir, uint64_t *packets, char *err,
		  size_t errlen)
{
	struct gen g = {.c = c};
	struct part *list = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	g.out = calloc(c->hosts, sizeof(*g.out));
	g.clock = calloc(c->hosts, sizeof(*g.clock));
	g.psn = calloc(c->hosts, sizeof(*g.psn));
	g.msgs = calloc(c->hosts, sizeof(*g.msgs));
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							    PCAP_TSTAMP_PRECISION_NANO);
	if (!g.out || !g.clock || !g.psn || !g.msgs || !dead) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned h = 0; h < c->hosts; h++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/h%u.pcap", dir, h);
		g.out[h] = pcap_dump_open(dead, path);
		if (!g.out[h]) {
			snprintf(err, errlen, "%s: %s", path, pcap_geterr(dead));
			goto out;
		}
	}
	unsigned depth = level(c->hosts - 1);
	unsigned steps = c->pattern == RSW_GEN_RING ? 2 * (c->hosts - 1)
			 : c->pattern == RSW_GEN_TREE ? 2 * depth : 1;
	uint64_t start = 0;
	for (unsigned s = 0; s < steps; s++) {
		if (step_transfers(&g, s, depth, &list, &n, &cap) < 0) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (run_step(&g, list, n, start) < 0) {
			snprintf(err, errlen, "cannot build a frame (MTU %u)", c->mtu);
			goto out;
		}
		uint64_t end = 0;
		for (unsigned h = 0; h < c->hosts; h++)
			if (g.clock[h] > end)
				end = g.clock[h];
		start = end + STEP_GAP_NS;
	}
	*packets = g.packets;
	rc = 0;
out:
	rc = close_captures(&g, dir, rc, err, errlen);
	for (unsigned h = 0; g.psn && h < c->hosts; h++)
		free(g.psn[h]);
	for (unsigned h = 0; g.msgs && h < c->hosts; h++)
		free(g.msgs[h]);
	if (dead)
		pcap_close(dead);
	free(g.out);
	free(g.clock);
	free(g.psn);
	free(g.msgs);
	free(list);
	return rc;
}
