/* The ARS step's trace record as text and JSON (trace_ars.c). */
#ifndef RSW_TRACE_ARS_H
#define RSW_TRACE_ARS_H

#include <stddef.h>

#include "trace_rec.h"

/* The ARS record (trace_ars.c): one line, "ars: ..."; and as JSON for explain's views (the
 * flowlet entry, each candidate's quality, the member and why). NULL without an ARS record. */
void rsw_trace_ars_line(const struct rsw_trace *tr, const struct rsw_fib *fib, char *out,
			size_t cap);
struct json_t;
struct json_t *rsw_trace_ars_json(const struct rsw_trace *tr, const struct rsw_fib *fib);

#endif
