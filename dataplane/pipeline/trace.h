/* A packet's trace, as VPP's packet trace: each stage of the pipeline appends what it decided
 * (parsed fields, the route's table and target, the hash key bytes and value, bucket, member,
 * next hop, queue, or the drop reason). The pipeline fills it only when handed one (NULL: off,
 * a branch per stage); views print it (`rocesw inspect --trace`, the control socket's
 * hash_explain). */
#ifndef RSW_TRACE_H
#define RSW_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "trace_rec.h"

/* Starts an empty trace of a frame entering in_port. */
void rsw_trace_start(struct rsw_trace *tr, uint16_t in_port);
/* Appends a record; a full trace keeps its first RSW_TRACE_MAX. Returns it (or a scratch one). */
struct rsw_trace_rec *rsw_trace_add(struct rsw_trace *tr, unsigned kind, unsigned stage);

/* One record as a line of text, "stage: what it decided", names from fib (may be NULL). */
void rsw_trace_rec_format(const struct rsw_trace *tr, const struct rsw_trace_rec *r,
			  const struct rsw_fib *fib, char *out, size_t cap);

/* The key's parts (rsw_hash_key_parts of the group's policy) as "hex bytes" per field: up to max
 * parts into name[], hex[][hex_cap]. Returns the number written. */
unsigned rsw_trace_key_fields(const struct rsw_trace *tr, const struct rsw_fib *fib,
			      const char *name[], char (*hex)[3 * 64 + 1], unsigned max,
			      char udf_names[][RSW_UDF_LABEL_MAX], int spaced);


#endif
