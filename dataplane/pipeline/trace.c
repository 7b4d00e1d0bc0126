/* Packet traces: records and their text (trace.h). */
#include <stdio.h>
#include <string.h>

#include "dataplane/hash/hash_algo.h"
#include "dataplane/pkt/addr.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/roce_hdr.h"
#include "pipeline.h"
#include "trace.h"
#include "trace_ars.h"

void rsw_trace_start(struct rsw_trace *tr, uint16_t in_port)
{
	tr->in_port = in_port;
	tr->key_len = 0;
	tr->ars.recorded = 0;
	tr->n = 0;
}

struct rsw_trace_rec *rsw_trace_add(struct rsw_trace *tr, unsigned kind, unsigned stage)
{
	static _Thread_local struct rsw_trace_rec scratch;
	struct rsw_trace_rec *r = tr->n < RSW_TRACE_MAX ? &tr->rec[tr->n++] : &scratch;
	memset(r, 0, sizeof(*r));
	r->kind = (uint8_t)kind;
	r->stage = (uint8_t)stage;
	return r;
}

static const char *port_name(const struct rsw_fib *fib, uint16_t port, char *buf, size_t cap)
{
	if (fib && port < fib->n_ports)
		return fib->ports[port].name;
	snprintf(buf, cap, "port %u", port);
	return buf;
}

static const char *addr(const struct rsw_pkt_meta *m, const uint8_t *a, char *buf, unsigned cap)
{
	struct rsw_ip ip = {.family = m->l3 == RSW_L3_IPV6 ? 6 : 4};
	memcpy(ip.a, a, 16);
	return rsw_ip_str(&ip, buf, cap);
}

#define PUT(...) (o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, __VA_ARGS__))

static void format_parse(const struct rsw_trace *tr, const struct rsw_trace_rec *r, char *out,
			 size_t cap)
{
	const struct rsw_pkt_meta *m = &tr->parsed;
	size_t o = 0;
	char s[64], d[64], nb[40];
	PUT("parse: %u bytes", m->frame_len);
	if (m->n_vlan)
		PUT(", vlan %u pcp %u", m->vlan_tci[0] & 0xFFF, m->vlan_tci[0] >> 13);
	if (m->l2_kind == RSW_L2_PFC) {
		PUT(", PFC class-enable 0x%02x times", m->pfc_class_enable);
		for (int i = 0; i < 8; i++)
			PUT(" %u", m->pfc_time[i]);
	} else if (m->l2_kind == RSW_L2_PAUSE) {
		PUT(", PAUSE time %u", m->pfc_time[0]);
	}
	if (m->l3 != RSW_L3_NONE && (!r->drop || m->ttl || m->ip_proto))
		PUT(", %s %s -> %s proto %u dscp %u ecn %u ttl %u",
		    m->l3 == RSW_L3_IPV4 ? "IPv4" : "IPv6", addr(m, m->src_ip, s, sizeof(s)),
		    addr(m, m->dst_ip, d, sizeof(d)), m->ip_proto, m->dscp, m->ecn, m->ttl);
	if (m->flags & RSW_META_F_UDP)
		PUT(", udp %u > %u", m->sport, m->dport);
	else if (m->flags & RSW_META_F_TCP)
		PUT(", tcp %u > %u", m->sport, m->dport);
	if (m->flags & RSW_META_F_ROCE)
		PUT(", RoCE %s qp 0x%06x psn %u", rsw_roce_opcode_name(m->bth_opcode, nb, sizeof(nb)),
		    m->bth_dest_qp, m->bth_psn);
	if (r->drop)
		PUT(", rejected: %s", rsw_drop_reason_name(r->drop));
}

static void format_ecmp(const struct rsw_trace *tr, const struct rsw_trace_rec *r,
			const struct rsw_fib *fib, char *out, size_t cap)
{
	size_t o = 0;
	if (fib && r->u.ecmp.group < fib->n_groups) {
		const struct rsw_fib_group *g = &fib->groups[r->u.ecmp.group];
		PUT("ecmp: group %s policy %s (%s) key", g->name, fib->policy_names[g->policy],
		    rsw_hash_algo_name(fib->policies[g->policy].algo));
	} else {
		PUT("ecmp: group %u key", r->u.ecmp.group);
	}
	for (unsigned i = 0; i < tr->key_len; i++)
		PUT("%s%02x", i ? "" : " ", tr->key[i]);
	PUT(" hash 0x%04x bucket %u member %u", r->u.ecmp.hash, r->u.ecmp.bucket, r->u.ecmp.member);
	if (r->u.ecmp.member != r->u.ecmp.static_member)
		PUT(" (adaptive routing; static member %u)", r->u.ecmp.static_member);
}

static const char *const stage_names[] = {
	[RSW_STAGE_RX] = "rx", [RSW_STAGE_PARSE] = "parse",
	[RSW_STAGE_MAC_CONTROL] = "mac-control", [RSW_STAGE_INGRESS] = "ingress",
	[RSW_STAGE_TM] = "tm",
};

void rsw_trace_rec_format(const struct rsw_trace *tr, const struct rsw_trace_rec *r,
			  const struct rsw_fib *fib, char *out, size_t cap)
{
	char pb[16], ip[64];
	size_t o = 0;
	switch (r->kind) {
	case RSW_TR_PARSE:
		format_parse(tr, r, out, cap);
		return;
	case RSW_TR_MAC_CONTROL:
		PUT("mac-control: consumed, honoured by %s's pause state",
		    port_name(fib, tr->in_port, pb, sizeof(pb)));
		return;
	case RSW_TR_PUNT:
		PUT("punt: to the switch's CPU");
		return;
	case RSW_TR_CLASSIFY:
		PUT("classify: tc %u pg %u", r->u.classify.tc, r->u.classify.pg);
		return;
	case RSW_TR_ROUTE:
		if (r->u.route.table == RSW_TR_TABLE_POLICY)
			PUT("route: policy route of %s", port_name(fib, tr->in_port, pb, sizeof(pb)));
		else
			PUT("route: main table");
		if (r->u.route.target == RSW_TR_TGT_GROUP)
			PUT(" -> group %s", fib && r->u.route.index < fib->n_groups
						    ? fib->groups[r->u.route.index].name : "?");
		else if (r->u.route.target == RSW_TR_TGT_BLACKHOLE)
			PUT(" -> blackhole");
		else if (r->u.route.target == RSW_TR_TGT_NEXTHOP)
			PUT(" -> next hop %s", fib && r->u.route.index < fib->n_nh
				? rsw_ip_str(&fib->nh[r->u.route.index].ip, ip, sizeof(ip)) : "?");
		else
			PUT(": no route");
		return;
	case RSW_TR_ECMP:
		format_ecmp(tr, r, fib, out, cap);
		return;
	case RSW_TR_ARS:
		rsw_trace_ars_line(tr, fib, out, cap);
		return;
	case RSW_TR_NEXTHOP:
		PUT("nexthop: %s out of %s", fib && r->u.nexthop.nexthop < fib->n_nh
			? rsw_ip_str(&fib->nh[r->u.nexthop.nexthop].ip, ip, sizeof(ip)) : "?",
		    port_name(fib, r->u.nexthop.port, pb, sizeof(pb)));
		return;
	case RSW_TR_REWRITE:
		PUT("rewrite: ttl %u, source and destination MAC of the next hop", r->u.rewrite.ttl);
		return;
	case RSW_TR_TM:
		PUT("tm: enqueue on %s queue %u", port_name(fib, r->u.tm.port, pb, sizeof(pb)),
		    r->u.tm.queue);
		return;
	case RSW_TR_DROP:
		PUT("drop: %s (%s)%s", rsw_drop_reason_name(r->drop),
		    r->stage < sizeof(stage_names) / sizeof(stage_names[0]) ? stage_names[r->stage]
									    : "?",
		    r->lossless ? ", lossless" : "");
		return;
	default:
		PUT("?");
	}
}

unsigned rsw_trace_key_fields(const struct rsw_trace *tr, const struct rsw_fib *fib,
			      const char *name[], char (*hex)[3 * 64 + 1], unsigned max,
			      char udf_names[][RSW_UDF_LABEL_MAX], int spaced)
{
	const struct rsw_trace_rec *r = rsw_trace_find(tr, RSW_TR_ECMP);
	if (!r || !fib || r->u.ecmp.group >= fib->n_groups)
		return 0;
	const struct rsw_hash_policy *pol = &fib->policies[fib->groups[r->u.ecmp.group].policy];
	const char *names[RSW_HF_COUNT + RSW_UDF_MAX];
	unsigned lens[RSW_HF_COUNT + RSW_UDF_MAX], off = 0, n = 0;
	unsigned parts = rsw_hash_key_parts(pol, tr->parsed.l3, names, lens, udf_names);
	for (unsigned k = 0; k < parts && n < max && off + lens[k] <= tr->key_len; k++) {
		size_t o = 0, cap = sizeof(hex[0]);
		char *out = hex[n];
		out[0] = 0;
		for (unsigned b = 0; b < lens[k] && b < 64; b++)
			PUT(spaced && b ? " %02x" : "%02x", tr->key[off + b]);
		name[n++] = names[k];
		off += lens[k];
	}
	return n;
}
