/* Explain's answer, a view of a packet's trace (trace.h): the control socket's hash_explain and
 * `rocesw hash explain --config` give the same document. */
#include <jansson.h>

#include "dataplane/hash/hash_algo.h"
#include "pipeline.h"
#include "trace_explain.h"
#include "trace_ars.h"

#define J(v) json_integer((json_int_t)(v))

json_t *rsw_trace_explain_json(const struct rsw_trace *tr, const struct rsw_verdict *v,
			       const struct rsw_fib *fib)
{
	json_t *o = json_object();
	json_object_set_new(o, "in_port", json_string(fib->ports[tr->in_port].name));
	const struct rsw_trace_rec *e = rsw_trace_find(tr, RSW_TR_ECMP);
	if (e) {
		const struct rsw_fib_group *g = &fib->groups[e->u.ecmp.group];
		const char *names[RSW_HF_COUNT + RSW_UDF_MAX];
		char hex[RSW_HF_COUNT + RSW_UDF_MAX][3 * 64 + 1];
		char udf_names[RSW_UDF_MAX][RSW_UDF_LABEL_MAX];
		unsigned parts = rsw_trace_key_fields(tr, fib, names, hex, RSW_HF_COUNT + RSW_UDF_MAX,
						      udf_names, 0);
		json_t *fields = json_array();
		for (unsigned k = 0; k < parts; k++)
			json_array_append_new(fields, json_pack("{s:s, s:s}", "field", names[k],
								"bytes", hex[k]));
		json_object_set_new(o, "group", json_string(g->name));
		json_object_set_new(o, "policy", json_string(fib->policy_names[g->policy]));
		json_object_set_new(o, "algorithm",
				    json_string(rsw_hash_algo_name(fib->policies[g->policy].algo)));
		json_object_set_new(o, "key", fields);
		json_object_set_new(o, "hash", J(e->u.ecmp.hash));
		json_object_set_new(o, "bucket", J(e->u.ecmp.bucket));
		json_object_set_new(o, "member", J(e->u.ecmp.member));
		json_t *ars = rsw_trace_ars_json(tr, fib);
		if (ars)
			json_object_set_new(o, "ars", ars);
	}
	if (v->kind != RSW_VERDICT_ENQUEUED) {
		json_object_set_new(o, "drop", json_string(rsw_verdict_name(v)));
		return o;
	}
	const struct rsw_trace_rec *nh = rsw_trace_find(tr, RSW_TR_NEXTHOP);
	char ip[64];
	json_object_set_new(o, "nexthop", json_string(rsw_ip_str(&fib->nh[nh->u.nexthop.nexthop].ip,
								 ip, sizeof(ip))));
	json_object_set_new(o, "egress_port", json_string(fib->ports[v->port].name));
	return o;
}
