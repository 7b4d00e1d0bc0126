/* A packet's trace, as VPP's packet trace: each stage of the pipeline appends what it decided
 * (parsed fields, the route's table and target, the hash key bytes and value, bucket, member,
 * next hop, queue, or the drop reason). The pipeline fills it only when handed one (NULL: off,
 * a branch per stage); views print it (`rocesw inspect --trace`, the control socket's
 * hash_explain). */
#ifndef RSW_TRACE_H
#define RSW_TRACE_H

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

/* Starts an empty trace of a frame entering in_port. */
void rsw_trace_start(struct rsw_trace *tr, uint16_t in_port);
/* Appends a record; a full trace keeps its first RSW_TRACE_MAX. Returns it (or a scratch one). */
struct rsw_trace_rec *rsw_trace_add(struct rsw_trace *tr, unsigned kind, unsigned stage);
/* The record of kind, or NULL. */
const struct rsw_trace_rec *rsw_trace_find(const struct rsw_trace *tr, unsigned kind);

/* One record as a line of text, "stage: what it decided", names from fib (may be NULL). */
void rsw_trace_rec_format(const struct rsw_trace *tr, const struct rsw_trace_rec *r,
			  const struct rsw_fib *fib, char *out, size_t cap);

/* The key's parts (rsw_hash_key_parts of the group's policy) as "hex bytes" per field: up to max
 * parts into name[], hex[][hex_cap]. Returns the number written. */
unsigned rsw_trace_key_fields(const struct rsw_trace *tr, const struct rsw_fib *fib,
			      const char *name[], char (*hex)[3 * 64 + 1], unsigned max,
			      char udf_names[][RSW_UDF_LABEL_MAX], int spaced);

/* The ARS record (trace_ars.c): one line, "ars: ..."; and as JSON for explain's views (the
 * flowlet entry, each candidate's quality, the member and why). NULL without an ARS record. */
void rsw_trace_ars_line(const struct rsw_trace *tr, const struct rsw_fib *fib, char *out,
			size_t cap);
struct json_t;
struct json_t *rsw_trace_ars_json(const struct rsw_trace *tr, const struct rsw_fib *fib);

#endif
