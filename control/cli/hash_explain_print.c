/* `rocesw hash explain`'s document printed for a person, shared by the live and capture views. */
#include <stdio.h>

#include "hash_explain_print.h"

/* The ARS part of an explain: the flowlet entry, each candidate's quality, the member and why. */
static void print_ars(json_t *a)
{
	printf("ars %s (object %s), flowlet entry %lld of %lld\n",
	       json_string_value(json_object_get(a, "mode")),
	       json_string_value(json_object_get(a, "object")),
	       (long long)json_integer_value(json_object_get(a, "flowlet_entry")),
	       (long long)json_integer_value(json_object_get(a, "max_flows")));
	printf("  %s\n", json_string_value(json_object_get(json_object_get(a, "entry"), "text")));
	json_t *c = json_object_get(a, "candidates"), *q;
	size_t i;
	if (c) {
		printf("  quality after %lld samples (bytes; band 0 is the least loaded):\n",
		       (long long)json_integer_value(json_object_get(a, "samples")));
		json_array_foreach(c, i, q)
			printf("    member %-3lld %-14s load %10lld band %lld  queue %10lld band %lld"
			       "  -> band %lld\n",
			       (long long)json_integer_value(json_object_get(q, "member")),
			       json_string_value(json_object_get(q, "port")),
			       (long long)json_integer_value(json_object_get(q, "load_avg")),
			       (long long)json_integer_value(json_object_get(q, "load_band")),
			       (long long)json_integer_value(json_object_get(q, "queue_avg")),
			       (long long)json_integer_value(json_object_get(q, "queue_band")),
			       (long long)json_integer_value(json_object_get(q, "band")));
	}
	printf("  chosen: %s\n", json_string_value(json_object_get(a, "why")));
}

void rsw_hash_explain_print(json_t *r, int json)
{
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	} else {
		const char *g = json_string_value(json_object_get(r, "group"));
		printf("in %s", json_string_value(json_object_get(r, "in_port")));
		if (g) {
			printf(", group %s, policy %s (%s)\n", g,
			       json_string_value(json_object_get(r, "policy")),
			       json_string_value(json_object_get(r, "algorithm")));
			json_t *f;
			size_t i;
			json_array_foreach(json_object_get(r, "key"), i, f)
				printf("  %-48s %s\n", json_string_value(json_object_get(f, "bytes")),
				       json_string_value(json_object_get(f, "field")));
			json_t *ars = json_object_get(r, "ars");
			printf("hash 0x%04llx, bucket %lld, %s %lld\n",
			       (unsigned long long)json_integer_value(json_object_get(r, "hash")),
			       (long long)json_integer_value(json_object_get(r, "bucket")),
			       ars ? "static member" : "member",
			       (long long)json_integer_value(json_object_get(ars ? ars : r,
									   ars ? "static_member"
									       : "member")));
			if (ars)
				print_ars(ars);
		} else {
			printf("\n");
		}
		if (json_object_get(r, "drop"))
			printf("dropped: %s\n", json_string_value(json_object_get(r, "drop")));
		else
			printf("next hop %s out of %s\n", json_string_value(json_object_get(r, "nexthop")),
			       json_string_value(json_object_get(r, "egress_port")));
	}
}
