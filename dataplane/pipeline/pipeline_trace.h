/* The pipeline's stages writing their trace records (trace.h); called only when tracing. */
#ifndef RSW_PIPELINE_TRACE_H
#define RSW_PIPELINE_TRACE_H

#include "pipeline.h"

/* The parser's fields, or its rejection rc. */
void rsw_pipeline_trace_parse(struct rsw_trace *tr, const struct rsw_pkt_meta *m, unsigned rc);
/* What the ingress tables decided for m: QoS, route, ECMP (with the key bytes the hash read
 * from frame), next hop; before the rewrite. */
void rsw_pipeline_trace_ingress(struct rsw_trace *tr, const struct rsw_fib *fib,
				const uint8_t *frame, const struct rsw_pkt_meta *m);
void rsw_pipeline_trace_rewrite(struct rsw_trace *tr, const struct rsw_pkt_meta *m);
/* The last record: the verdict. */
void rsw_pipeline_trace_verdict(struct rsw_trace *tr, const struct rsw_verdict *v);

#endif
