/* `rocesw show WHAT`: what a running dataplane has and counts, over its control socket. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "ctl_client.h"

#define U(o, k) ((unsigned long long)json_integer_value(json_object_get((o), (k))))
#define S(o, k) (json_string_value(json_object_get((o), (k))) ?: "")

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw show counters|ports|queues|buffers|pfc|watchdog|routes|ecmp|config|control\n"
		"                   [--json] [--socket PATH]\n"
		"\n"
		"Asks a running rocesw-dataplane over its control socket (--socket, else $ROCESW_SOCKET,\n"
		"else " RSW_CTL_DEFAULT_SOCKET "). Counter names are SAI's (SAI_PORT_STAT_PFC_*,\n"
		"SAI_QUEUE_STAT_*, SAI_INGRESS_PRIORITY_GROUP_STAT_*, SAI_BUFFER_POOL_STAT_*) and\n"
		"SONiC's PFC_WD_QUEUE_STATS_*. --json prints the reply as is (docs/control.md).\n");
}

static void print_counters(json_t *r)
{
	json_t *p, *v;
	size_t i;
	const char *k;
	printf("%-12s %12s %14s %12s %14s %8s\n", "port", "rx_packets", "rx_bytes", "tx_packets",
	       "tx_bytes", "pfc_rx");
	json_array_foreach(json_object_get(r, "ports"), i, p)
		printf("%-12s %12llu %14llu %12llu %14llu %8llu\n", S(p, "name"), U(p, "rx_packets"),
		       U(p, "rx_bytes"), U(p, "tx_packets"), U(p, "tx_bytes"), U(p, "pfc_rx_frames"));
	json_object_foreach(json_object_get(r, "drops"), k, v)
		if (json_integer_value(v))
			printf("drop %-24s %12lld\n", k, (long long)json_integer_value(v));
	json_t *c = json_object_get(r, "conservation");
	printf("received %llu = transmitted %llu + dropped %llu + consumed %llu + queued %llu: %s\n",
	       U(c, "received"), U(c, "transmitted"), U(c, "dropped"), U(c, "consumed"),
	       U(c, "queued"), json_is_true(json_object_get(c, "holds")) ? "holds" : "not yet");
}

static void print_ports(json_t *r)
{
	json_t *p;
	size_t i;
	printf("%-12s %-14s %-8s %-5s %8s %12s %12s\n", "port", "alias", "role", "admin", "speed",
	       "rx_packets", "tx_packets");
	json_array_foreach(r, i, p)
		printf("%-12s %-14s %-8s %-5s %8llu %12llu %12llu\n", S(p, "name"), S(p, "alias"),
		       S(p, "role"), S(p, "admin_status"), U(p, "speed"), U(p, "rx_packets"),
		       U(p, "tx_packets"));
}

/* Each port's queues (key "queues") or PGs, the non-zero counters only. */
static void print_nested(json_t *r, const char *key, const char *index, const char *prefix)
{
	json_t *p, *q, *v;
	size_t i, j;
	const char *k;
	json_array_foreach(r, i, p)
		json_array_foreach(json_object_get(p, key), j, q) {
			int any = 0;
			json_object_foreach(q, k, v)
				if (strcmp(k, index) && (!prefix || !strncmp(k, prefix, strlen(prefix))) &&
				    json_integer_value(v)) {
					if (!any)
						printf("%s %s %llu:", S(p, "name"), index, U(q, index));
					printf(" %s=%lld", k, (long long)json_integer_value(v));
					any = 1;
				}
			if (any)
				printf("\n");
		}
}

static void print_flat(json_t *o, const char *indent)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		if (json_is_object(v)) {
			printf("%s%s:\n", indent, k);
			print_flat(v, "  ");
		} else if (json_is_string(v)) {
			printf("%s%s: %s\n", indent, k, json_string_value(v));
		} else if (json_is_integer(v) || json_is_boolean(v)) {
			printf("%s%s: %lld\n", indent, k,
			       json_is_boolean(v) ? (long long)json_is_true(v)
						  : (long long)json_integer_value(v));
		}
	}
}

static void print_pfc(json_t *r)
{
	json_t *p, *v;
	size_t i;
	const char *k;
	json_array_foreach(r, i, p) {
		int any = 0;
		json_object_foreach(json_object_get(p, "pfc"), k, v)
			if (json_integer_value(v)) {
				if (!any)
					printf("%s", S(p, "name"));
				printf(" %s=%lld", k, (long long)json_integer_value(v));
				any = 1;
			}
		if (any)
			printf("\n");
	}
}

static void print_routes(json_t *r)
{
	json_t *o;
	size_t i;
	json_array_foreach(r, i, o) {
		printf("%-24s", S(o, "prefix"));
		if (json_object_get(o, "in_port"))
			printf(" in %s", S(o, "in_port"));
		if (json_object_get(o, "nexthop"))
			printf(" via %s", S(o, "nexthop"));
		else if (json_object_get(o, "nexthop_group"))
			printf(" group %s", S(o, "nexthop_group"));
		else
			printf(" blackhole");
		printf("  (%s)\n", S(o, "origin"));
	}
}

static void print_ecmp(json_t *r)
{
	json_t *g, *m;
	size_t i, j;
	json_array_foreach(r, i, g) {
		printf("group %s: policy %s, %llu buckets%s\n", S(g, "name"), S(g, "hash_policy"),
		       U(g, "buckets"), json_is_true(json_object_get(g, "resilient")) ? ", resilient" : "");
		json_array_foreach(json_object_get(g, "members"), j, m)
			printf("  member %-3llu %-16s %-12s %6llu buckets %12llu packets\n",
			       U(m, "member"), S(m, "nexthop"), S(m, "port"), U(m, "buckets"),
			       U(m, "packets"));
	}
}

static void print_buffers(json_t *r)
{
	json_t *p;
	size_t i;
	json_array_foreach(json_object_get(r, "pools"), i, p)
		printf("pool %-24s size %12llu  used %12llu  watermark %12llu\n", S(p, "name"),
		       U(p, "size"), U(p, "SAI_BUFFER_POOL_STAT_CURR_OCCUPANCY_BYTES"),
		       U(p, "SAI_BUFFER_POOL_STAT_WATERMARK_BYTES"));
	print_nested(json_object_get(r, "ports"), "priority_groups", "pg", NULL);
}

int rsw_cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *sock = NULL;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': sock = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *what = argv[optind];
	char err[1024];
	json_t *req = json_pack("{s:s, s:s}", "op", "show", "what", what);
	json_t *r = rsw_ctl_call(rsw_ctl_socket_path(sock), req, err, sizeof(err));
	json_decref(req);
	if (!r) {
		fprintf(stderr, "rocesw show: %s\n", err);
		return 1;
	}
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	} else if (!strcmp(what, "counters")) {
		print_counters(r);
	} else if (!strcmp(what, "ports")) {
		print_ports(r);
	} else if (!strcmp(what, "queues")) {
		print_nested(r, "queues", "queue", "SAI_");
	} else if (!strcmp(what, "watchdog")) {
		print_nested(r, "queues", "queue", "PFC_WD_");
	} else if (!strcmp(what, "pfc")) {
		print_pfc(r);
	} else if (!strcmp(what, "routes")) {
		print_routes(r);
	} else if (!strcmp(what, "ecmp")) {
		print_ecmp(r);
	} else if (!strcmp(what, "buffers")) {
		print_buffers(r);
	} else {
		print_flat(r, "");
	}
	json_decref(r);
	return 0;
}
