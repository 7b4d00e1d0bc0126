/* Explain's document of one packet, from its trace: the ingress port, for an ECMP group the
 * group, policy, algorithm, the bytes fed to its hash field by field, hash, bucket and member
 * (with an ARS object, "ars": the flowlet entry, the candidates' quality, the member and why),
 * then the next hop and egress port, or the drop. */
#ifndef RSW_TRACE_EXPLAIN_H
#define RSW_TRACE_EXPLAIN_H

#include <jansson.h>

#include "pipeline.h"
#include "trace.h"

json_t *rsw_trace_explain_json(const struct rsw_trace *tr, const struct rsw_verdict *v,
			       const struct rsw_fib *fib);

#endif
