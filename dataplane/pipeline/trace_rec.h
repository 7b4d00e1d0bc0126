/* A packet's trace records: what each stage of the pipeline decided, the types the trace's
 * writers (pipeline_trace.c) and its views (trace.c, trace_ars.c) share. */
#ifndef RSW_TRACE_REC_H
#define RSW_TRACE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/hash/hash_policy.h"
#include "dataplane/pkt/pkt_meta.h"
#include "dataplane/tables/ars.h"
#include "dataplane/tables/fib.h"

enum rsw_trace_kind {
	RSW_TR_PARSE = 1,   /* the parser's fields (rsw_trace.parsed), or its rejection */
	RSW_TR_MAC_CONTROL, /* PFC / PAUSE consumed */
	RSW_TR_PUNT,        /* to the switch's CPU */
	RSW_TR_CLASSIFY,    /* tc, pg */
	RSW_TR_ROUTE,       /* which table answered, and its target */
	RSW_TR_ECMP,        /* group, policy, key (rsw_trace.key), hash, bucket, member */
	RSW_TR_NEXTHOP,     /* next hop and egress port */
	RSW_TR_REWRITE,     /* TTL after the rewrite */
	RSW_TR_TM,          /* admitted onto (port, queue) */
	RSW_TR_DROP,        /* the reason, and the stage (rsw_trace_rec.stage) */
	RSW_TR_ARS,         /* the ARS step of an ECMP group with an ARS object (rsw_trace.ars) */
};

enum rsw_trace_route_table { RSW_TR_TABLE_POLICY = 1, RSW_TR_TABLE_MAIN };
enum rsw_trace_route_target { RSW_TR_TGT_NEXTHOP = 1, RSW_TR_TGT_GROUP, RSW_TR_TGT_BLACKHOLE };

struct rsw_trace_rec {
	uint8_t kind;  /* enum rsw_trace_kind */
	uint8_t stage; /* enum rsw_stage (pipeline.h) that wrote it */
	uint8_t drop;  /* RSW_TR_PARSE, RSW_TR_DROP: the reason */
	uint8_t lossless;
	union {
		struct { uint8_t tc, pg; } classify;
		struct { uint8_t table, target; uint32_t index; } route;
		struct {
			uint32_t group, hash, bucket;
			uint16_t member, static_member; /* ARS may move a flow off its static one */
		} ecmp;
		struct { uint32_t nexthop; uint16_t port; } nexthop;
		struct { uint8_t ttl; } rewrite;
		struct { uint16_t port; uint8_t queue; } tm;
	} u;
};

#define RSW_TRACE_MAX 12

struct rsw_trace {
	uint16_t in_port;
	struct rsw_pkt_meta parsed;       /* as the parser left it (RSW_TR_PARSE) */
	uint8_t key[RSW_HASH_KEY_MAX];    /* the ECMP hash's input (RSW_TR_ECMP) */
	uint16_t key_len;
	struct rsw_ars_decision ars;      /* RSW_TR_ARS: what the ARS step saw and decided */
	unsigned n;
	struct rsw_trace_rec rec[RSW_TRACE_MAX];
};

/* The record of kind, or NULL. */
static inline const struct rsw_trace_rec *rsw_trace_find(const struct rsw_trace *tr, unsigned kind)
{
	for (unsigned i = 0; i < tr->n; i++)
		if (tr->rec[i].kind == kind)
			return &tr->rec[i];
	return NULL;
}

#endif
