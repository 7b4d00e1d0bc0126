/* `rocesw te`: what a centralized TE controller would install for a collective on a zone
 * (docs/te.md): the flows' paths, the policy routes that pin them, the links' load. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_table.h"
#include "cmd.h"
#include "collective_spec.h"
#include "eal_quiet.h"
#include "te.h"
#include "te_write.h"
#include "dataplane/pkt/addr.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/state.h"
#include "dataplane/tables/switch.h"

#define MAX_FAILS 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw te --config ZONE --collective SPEC [--fail WHAT ...] [--out DIR]\n"
		"                 [--json]\n"
		"\n"
		"Centralized traffic engineering (docs/te.md): the collective's traffic matrix placed\n"
		"flow by flow, largest demand first, on the shortest up-down path with room for it\n"
		"(CSPF over link capacity), and the policy routes <ingress port, destination /32> ->\n"
		"next hop that pin each flow where its switch had a choice.\n"
		"\n"
		"  --config ZONE      a zone config (as rocesw replay takes)\n"
		"  --collective SPEC  the traffic: PATTERN[,KEY=VALUE...] or a YAML file, as\n"
		"                     rocesw replay --collective takes it (ranks= places the job)\n"
		"  --fail WHAT        compute for the zone with WHAT failed: a switch (its links),\n"
		"                     SWITCH|PORT (the link there) or a host; repeatable. No route\n"
		"                     uses a failed link\n"
		"  --out DIR          write DIR/zone.yaml and DIR/<switch>.yaml (the zone's configs\n"
		"                     with the routes in POLICY_ROUTE), DIR/sonic/<switch>.json (ACL\n"
		"                     redirect rules) and DIR/eos/<switch>.cfg (PBR policy maps)\n"
		"  --json             the result as JSON on stdout\n"
		"  --help, --version\n");
}

static const char *const status_name[] = {"placed", "over", "unreachable"};

static void path_text(const struct rsw_zone *z, const struct rsw_te_flow *f, char *buf,
		      size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < f->n_path && n < len; i++) {
		struct rsw_topo_end a = rsw_te_dir_from(z, f->path[i]);
		struct rsw_topo_end b = rsw_te_dir_to(z, f->path[i]);
		if (!i)
			n += (size_t)snprintf(buf + n, len - n, "%s", a.sw == RSW_TOPO_HOST
					      ? z->host[a.idx].name : z->sw[a.sw].name);
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, " > %s", b.sw == RSW_TOPO_HOST
					      ? z->host[b.idx].name : z->sw[b.sw].name);
	}
}

static int by_load(const void *a, const void *b, void *ctx)
{
	const double *l = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (l[x] != l[y])
		return l[x] > l[y] ? -1 : 1;
	return (x > y) - (x < y);
}

static void print_text(const struct rsw_zone *z, const struct rsw_coll *c,
		       const struct rsw_te_result *r, const char *fails)
{
	printf("rocesw te: %s, %s of %u ranks: %u flows, %u placed, %u over capacity, "
	       "%u unreachable; %u policy routes; failed: %s\n\n", z->name,
	       rsw_coll_pattern_name(c->pattern), c->n_ranks, r->n_flow,
	       r->n_flow - r->n_over - r->n_unreachable, r->n_over, r->n_unreachable, r->n_route,
	       fails[0] ? fails : "nothing");
	printf("flows, in placement order (largest demand first, ties by source then destination)\n");
	static const char *const fh[] = {"#", "src", "dst", "demand Gb/s", "status", "path"};
	struct rsw_cli_table *t = rsw_cli_table_new(6, fh);
	for (unsigned i = 0; i < r->n_flow; i++) {
		const struct rsw_te_flow *f = &r->flow[i];
		char path[1024];
		path_text(z, f, path, sizeof(path));
		rsw_cli_table_num(t, i);
		rsw_cli_table_cell(t, "%s", z->host[f->src].name);
		rsw_cli_table_cell(t, "%s", z->host[f->dst].name);
		rsw_cli_table_cell(t, "%.1f", f->demand_mbps / 1000);
		rsw_cli_table_cell(t, "%s", status_name[f->status]);
		rsw_cli_table_cell(t, "%s", path);
	}
	rsw_cli_table_print(t, stdout, "(no flows)");
	printf("\npolicy routes (POLICY_ROUTE \"PORT|PREFIX\": {nexthop})\n");
	static const char *const rh[] = {"switch", "in port", "prefix", "out port", "next hop",
					 "flows"};
	t = rsw_cli_table_new(6, rh);
	for (unsigned i = 0; i < r->n_route; i++) {
		const struct rsw_te_route *rt = &r->route[i];
		const struct rsw_state *st = z->sw[rt->sw].sw->state;
		char ip[64], nh[64];
		rsw_cli_table_cell(t, "%s", z->sw[rt->sw].name);
		rsw_cli_table_cell(t, "%s", st->ports[rt->in_port].name);
		rsw_cli_table_cell(t, "%s/%u", rsw_ip_str(&rt->prefix.ip, ip, sizeof(ip)),
				   rt->prefix.len);
		rsw_cli_table_cell(t, "%s", st->ports[rt->out_port].name);
		rsw_cli_table_cell(t, "%s", rsw_ip_str(&rt->nexthop, nh, sizeof(nh)));
		rsw_cli_table_num(t, rt->n_flows);
	}
	rsw_cli_table_print(t, stdout, "(none: no switch had a choice)");
	uint32_t *order = malloc((r->n_dir ? r->n_dir : 1) * sizeof(*order));
	if (!order)
		return;
	unsigned n = 0;
	for (uint32_t d = 0; d < r->n_dir; d++)
		if (r->load_mbps[d] > 0 && z->link[d / 2].a.sw != RSW_TOPO_HOST &&
		    z->link[d / 2].b.sw != RSW_TOPO_HOST)
			order[n++] = d;
	qsort_r(order, n, sizeof(*order), by_load, r->load_mbps);
	printf("\nswitch-to-switch links carrying flows, busiest first\n");
	static const char *const lh[] = {"from", "to", "load Gb/s", "capacity Gb/s", "use %"};
	t = rsw_cli_table_new(5, lh);
	for (unsigned i = 0; i < n; i++) {
		char a[160], b[160];
		double cap = z->link[order[i] / 2].speed_mbps;
		rsw_cli_table_cell(t, "%s", rsw_te_end_name(z, rsw_te_dir_from(z, order[i]), a,
							     sizeof(a)));
		rsw_cli_table_cell(t, "%s", rsw_te_end_name(z, rsw_te_dir_to(z, order[i]), b,
							     sizeof(b)));
		rsw_cli_table_cell(t, "%.1f", r->load_mbps[order[i]] / 1000);
		rsw_cli_table_cell(t, "%.0f", cap / 1000);
		rsw_cli_table_cell(t, "%.1f", 100 * r->load_mbps[order[i]] / cap);
	}
	rsw_cli_table_print(t, stdout, "(none)");
	free(order);
}

static json_t *to_json(const struct rsw_zone *z, const struct rsw_coll *c,
		       const struct rsw_te_result *r, const uint8_t *down)
{
	json_t *flows = json_array(), *routes = json_array(), *links = json_array();
	json_t *failed = json_array();
	char a[160], b[160];
	for (unsigned i = 0; i < r->n_flow; i++) {
		const struct rsw_te_flow *f = &r->flow[i];
		json_t *path = json_array();
		for (unsigned k = 0; k < f->n_path; k++)
			json_array_append_new(path, json_pack(
				"{s:i, s:s, s:s}", "link", f->path[k] / 2, "from",
				rsw_te_end_name(z, rsw_te_dir_from(z, f->path[k]), a, sizeof(a)),
				"to", rsw_te_end_name(z, rsw_te_dir_to(z, f->path[k]), b, sizeof(b))));
		json_array_append_new(flows, json_pack(
			"{s:i, s:s, s:s, s:I, s:f, s:s, s:o, s:i}", "order", i, "src",
			z->host[f->src].name, "dst", z->host[f->dst].name, "bytes",
			(json_int_t)f->bytes, "demand_mbps", f->demand_mbps, "status",
			status_name[f->status], "path", path, "paths_considered",
			f->n_alternatives));
	}
	for (unsigned i = 0; i < r->n_route; i++) {
		const struct rsw_te_route *rt = &r->route[i];
		const struct rsw_state *st = z->sw[rt->sw].sw->state;
		char ip[64], nh[64], pfx[80];
		snprintf(pfx, sizeof(pfx), "%s/%u", rsw_ip_str(&rt->prefix.ip, ip, sizeof(ip)),
			 rt->prefix.len);
		json_array_append_new(routes, json_pack(
			"{s:s, s:s, s:s, s:s, s:s, s:s, s:i}", "switch", z->sw[rt->sw].name, "in_port",
			st->ports[rt->in_port].name, "prefix", pfx, "dst", z->host[rt->dst].name,
			"out_port", st->ports[rt->out_port].name, "nexthop",
			rsw_ip_str(&rt->nexthop, nh, sizeof(nh)), "flows", rt->n_flows));
	}
	for (uint32_t d = 0; d < r->n_dir; d++)
		if (r->load_mbps[d] > 0)
			json_array_append_new(links, json_pack(
				"{s:i, s:s, s:s, s:f, s:i}", "link", d / 2, "from",
				rsw_te_end_name(z, rsw_te_dir_from(z, d), a, sizeof(a)), "to",
				rsw_te_end_name(z, rsw_te_dir_to(z, d), b, sizeof(b)), "load_mbps",
				r->load_mbps[d], "capacity_mbps", z->link[d / 2].speed_mbps));
	for (unsigned i = 0; i < z->n_link; i++)
		if (down[i])
			json_array_append_new(failed, json_pack(
				"{s:i, s:s, s:s}", "link", i, "a",
				rsw_te_end_name(z, z->link[i].a, a, sizeof(a)), "b",
				rsw_te_end_name(z, z->link[i].b, b, sizeof(b))));
	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "zone", z->name,
			 "pattern", rsw_coll_pattern_name(c->pattern), "ranks", c->n_ranks,
			 "placed", r->n_flow - r->n_over - r->n_unreachable, "over_capacity",
			 r->n_over, "unreachable", r->n_unreachable, "failed", failed, "flows",
			 flows, "routes", routes, "links", links);
}

struct te_args {
	const char *config, *coll, *out;
	const char *fail[MAX_FAILS];
	unsigned n_fail;
	int json;
};

static int parse_args(int argc, char **argv, struct te_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"collective", required_argument, NULL, 'C'},
		{"fail", required_argument, NULL, 'F'},   {"out", required_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->config = optarg; break;
		case 'C': a->coll = optarg; break;
		case 'o': a->out = optarg; break;
		case 'j': a->json = 1; break;
		case 'F':
			if (a->n_fail == MAX_FAILS) {
				fprintf(stderr, "rocesw te: at most %d --fail\n", MAX_FAILS);
				return 2;
			}
			a->fail[a->n_fail++] = optarg;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rocesw %s\n", RSW_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocesw te: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->config || !a->coll) {
		fprintf(stderr, "rocesw te: --config ZONE and --collective SPEC are needed\n");
		usage(stderr);
		return 2;
	}
	return -1;
}

int rsw_cmd_te(int argc, char **argv)
{
	static struct te_args a;
	static struct rsw_zone z;
	static struct rsw_coll coll;
	char err[2048];
	a = (struct te_args){0};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	int zone = rsw_zone_detect(a.config, err, sizeof(err));
	if (zone <= 0) {
		fprintf(stderr, "rocesw te: --config %s: %s\n", a.config,
			zone < 0 ? err : "not a zone config (no SWITCH table)");
		return zone < 0 ? 1 : 2;
	}
	if (rsw_eal_init_quiet("rocesw") < 0)
		return 1;
	rsw_fib_compact_ipv4(1);
	struct rsw_zone_opts zo = {.ecn_seed = 1, .warnings = NULL};
	if (rsw_zone_load(a.config, &zo, &z, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw te: %s\n", err);
		return 1;
	}
	uint8_t *down = calloc(z.n_link ? z.n_link : 1, 1);
	char fails[1024] = "";
	rc = down ? 0 : 1;
	if (rc == 0 && rsw_coll_spec_parse(a.coll, &z, &coll, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw te: %s\n", err);
		rc = 2;
	}
	for (unsigned i = 0; rc == 0 && i < a.n_fail; i++) {
		if (rsw_te_fail(&z, a.fail[i], down, err, sizeof(err)) < 0) {
			fprintf(stderr, "rocesw te: %s\n", err);
			rc = 2;
		}
		snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails), "%s%s", i ? ", " : "",
			 a.fail[i]);
	}
	struct rsw_te_result res = {0};
	if (rc == 0 && rsw_te_compute(&z, &coll, down, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw te: %s\n", err);
		rc = 1;
	}
	if (rc == 0 && a.out && rsw_te_write(a.out, a.config, &z, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw te: %s\n", err);
		rc = 1;
	}
	if (rc == 0 && a.json) {
		json_t *j = to_json(&z, &coll, &res, down);
		rc = json_dumpf(j, stdout, JSON_INDENT(2)) < 0;
		printf("\n");
		json_decref(j);
	} else if (rc == 0) {
		print_text(&z, &coll, &res, fails);
		if (a.out)
			printf("\nwritten: %s/zone.yaml, %s/<switch>.yaml, %s/sonic/, %s/eos/\n",
			       a.out, a.out, a.out, a.out);
	}
	rsw_te_free(&res);
	free(down);
	rsw_zone_free(&z);
	rsw_fib_process_exiting();
	return rc;
}
