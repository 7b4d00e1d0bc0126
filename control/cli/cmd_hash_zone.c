/* `rocesw hash --zone Z`: the hash lab over a zone's two hash stages (hash_zone.h). */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_table.h"
#include "eal_quiet.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/switch.h"
#include "hash_zone.h"
#include "hash_lab_html.h"
#include "html.h"

static const char *const tier_name[RSW_TIERS] = {"up", "down"};

static void link_name(const struct rsw_zone *z, const struct rsw_zone_link_load *l, char *buf,
		      size_t n)
{
	if (l->sw == RSW_TOPO_HOST)
		snprintf(buf, n, "host");
	else
		snprintf(buf, n, "%s|%s", z->sw[l->sw].name,
			 rsw_switch_fib(z->sw[l->sw].sw)->ports[l->port].name);
}

/* Spread of one tier's links: mean and standard deviation of their bytes, the most and the
 * least loaded link (the first met on ties) and how many carried nothing. */
struct tier_spread {
	unsigned n, idle;
	double mean, sd;
	int most, least; /* indices into r->link */
};

static struct tier_spread spread(const struct rsw_zone_lab *r, int tier)
{
	struct tier_spread s = {.most = -1, .least = -1};
	double sum = 0, sq = 0;
	for (unsigned i = 0; i < r->n_links; i++) {
		const struct rsw_zone_link_load *l = &r->link[i];
		if (l->tier != tier)
			continue;
		s.n++;
		s.idle += l->bytes == 0;
		sum += (double)l->bytes;
		sq += (double)l->bytes * (double)l->bytes;
		if (s.most < 0 || l->bytes > r->link[s.most].bytes)
			s.most = (int)i;
		if (s.least < 0 || l->bytes < r->link[s.least].bytes)
			s.least = (int)i;
	}
	if (s.n) {
		s.mean = sum / s.n;
		s.sd = sqrt(fmax(0, sq / s.n - s.mean * s.mean));
	}
	return s;
}

static json_t *result_json(const char *name, const struct rsw_zone *z, const struct rsw_zone_lab *r)
{
	json_t *o = json_object(), *tiers = json_object(), *links = json_array(), *fl = json_object();
	json_object_set_new(o, "name", json_string(name));
	for (int k = 0; k < RSW_TIERS; k++) {
		const struct rsw_zone_tier *tr = &r->tier[k];
		json_t *x = json_object();
		json_object_set_new(x, "links", json_integer(tr->n_links));
		json_object_set_new(x, "max_mean", json_real(tr->max_mean));
		json_object_set_new(x, "jain", json_real(tr->jain));
		json_object_set_new(x, "fat_flows", json_integer(tr->fat_n));
		json_object_set_new(x, "fat_links_colliding", json_integer(tr->fat_links_colliding));
		struct tier_spread sp = spread(r, k);
		json_object_set_new(x, "idle_links", json_integer(sp.idle));
		json_object_set_new(x, "mean_bytes", json_real(sp.mean));
		json_object_set_new(x, "stddev_bytes", json_real(sp.sd));
		json_object_set_new(tiers, tier_name[k], x);
	}
	for (unsigned i = 0; i < r->n_links; i++) {
		const struct rsw_zone_link_load *l = &r->link[i];
		if (l->sw == RSW_TOPO_HOST)
			continue; /* a host's own link carries what it sent: no choice was made */
		char from[160];
		link_name(z, l, from, sizeof(from));
		json_t *x = json_object();
		json_object_set_new(x, "from", json_string(from));
		json_object_set_new(x, "tier", l->tier >= 0 ? json_string(tier_name[l->tier])
							  : json_string("host"));
		json_object_set_new(x, "flows", json_integer((json_int_t)l->flows));
		json_object_set_new(x, "packets", json_integer((json_int_t)l->packets));
		json_object_set_new(x, "bytes", json_integer((json_int_t)l->bytes));
		json_array_append_new(links, x);
	}
	json_object_set_new(fl, "delivered", json_integer((json_int_t)r->flows_delivered));
	json_object_set_new(fl, "left", json_integer((json_int_t)r->flows_left));
	json_object_set_new(fl, "dropped", json_integer((json_int_t)r->flows_dropped));
	json_object_set_new(fl, "unplaced", json_integer((json_int_t)r->flows_unplaced));
	json_object_set_new(fl, "looped", json_integer((json_int_t)r->flows_looped));
	json_object_set_new(o, "flows", fl);
	json_object_set_new(o, "tiers", tiers);
	json_object_set_new(o, "links", links);
	return o;
}

static int cmp_load(const void *a, const void *b, void *ctx)
{
	const struct rsw_zone_link_load *l = ctx;
	unsigned i = *(const unsigned *)a, j = *(const unsigned *)b;
	if (l[i].bytes != l[j].bytes)
		return l[i].bytes < l[j].bytes ? 1 : -1;
	return i < j ? -1 : i > j;
}

/* A policy's tiers (links, max/mean, Jain, spread, most and least loaded) and its TOP_LINKS
 * most loaded switch-to-switch links; --json lists every link. */
#define TOP_LINKS 10
static void print_result(const char *name, const struct rsw_zone *z, const struct rsw_zone_lab *r)
{
	static const char *const head[] = {"tier", "links", "idle", "max/mean", "Jain",
					   "stddev/mean", "fat collisions", "most loaded", "MB",
					   "least loaded", "MB"};
	struct rsw_cli_table *t = rsw_cli_table_new(11, head);
	printf("\npolicy %s\n", name);
	for (int k = 0; k < RSW_TIERS; k++) {
		const struct rsw_zone_tier *tr = &r->tier[k];
		struct tier_spread sp = spread(r, k);
		if (!tr->n_links || sp.most < 0)
			continue;
		char most[160], least[160];
		link_name(z, &r->link[sp.most], most, sizeof(most));
		link_name(z, &r->link[sp.least], least, sizeof(least));
		rsw_cli_table_cell(t, "%s", tier_name[k]);
		rsw_cli_table_num(t, tr->n_links);
		rsw_cli_table_num(t, sp.idle);
		rsw_cli_table_cell(t, "%.2f", tr->max_mean);
		rsw_cli_table_cell(t, "%.3f", tr->jain);
		rsw_cli_table_cell(t, "%.3f", sp.mean > 0 ? sp.sd / sp.mean : 0);
		rsw_cli_table_cell(t, "%u of %u", tr->fat_links_colliding, tr->fat_n);
		rsw_cli_table_cell(t, "%s", most);
		rsw_cli_table_cell(t, "%.3f", (double)r->link[sp.most].bytes / 1e6);
		rsw_cli_table_cell(t, "%s", least);
		rsw_cli_table_cell(t, "%.3f", (double)r->link[sp.least].bytes / 1e6);
	}
	rsw_cli_table_print(t, stdout, "(no switch-to-switch links)");
	unsigned *order = malloc((r->n_links + 1) * sizeof(*order)), n = 0;
	if (!order)
		return;
	for (unsigned i = 0; i < r->n_links; i++)
		if (r->link[i].tier >= 0)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_load, (void *)r->link);
	unsigned shown = n < TOP_LINKS ? n : TOP_LINKS;
	printf("\nmost loaded links: top %u of %u by bytes (every link: --json)\n", shown, n);
	static const char *const top_head[] = {"link", "tier", "MB", "flows", "packets"};
	t = rsw_cli_table_new(5, top_head);
	for (unsigned k = 0; k < shown; k++) {
		const struct rsw_zone_link_load *l = &r->link[order[k]];
		char from[160];
		link_name(z, l, from, sizeof(from));
		rsw_cli_table_cell(t, "%s", from);
		rsw_cli_table_cell(t, "%s", tier_name[l->tier]);
		rsw_cli_table_cell(t, "%.3f", (double)l->bytes / 1e6);
		rsw_cli_table_num(t, l->flows);
		rsw_cli_table_num(t, l->packets);
	}
	rsw_cli_table_print(t, stdout, "(none)");
	free(order);
	if (r->flows_left || r->flows_dropped || r->flows_unplaced || r->flows_looped)
		printf("flows: %lu delivered, %lu left the zone, %lu dropped, %lu with no entry "
		       "port, %lu looped\n", (unsigned long)r->flows_delivered,
		       (unsigned long)r->flows_left, (unsigned long)r->flows_dropped,
		       (unsigned long)r->flows_unplaced, (unsigned long)r->flows_looped);
}

/* One policy's section of the page: its tiers' numbers and a bar per link of each tier, labelled
 * with the link; the caller puts every chart on one y scale. */
static json_t *html_policy(unsigned idx, const char *name, const struct rsw_zone *z,
			   const struct rsw_zone_lab *r)
{
	json_t *s = rsw_block_section(name, NULL), *rows = json_array();
	for (int k = 0; k < RSW_TIERS; k++)
		if (r->tier[k].n_links)
			json_array_append_new(rows, rsw_row("%s\t%u\t%.2f\t%.3f\t%u of %u", tier_name[k],
				r->tier[k].n_links, r->tier[k].max_mean, r->tier[k].jain,
				r->tier[k].fat_links_colliding, r->tier[k].fat_n));
	rsw_block_add(s, rsw_block_table("tiers", json_pack("[s,s,s,s,s]", "tier", "links",
			"max/mean", "Jain", "links carrying two of the largest flows"), rows));
	for (int k = 0; k < RSW_TIERS; k++) {
		if (!r->tier[k].n_links)
			continue;
		char id[64], title[300];
		snprintf(id, sizeof(id), "policy-%u-%s", idx, tier_name[k]);
		snprintf(title, sizeof(title), "%s: %s links", name, tier_name[k]);
		json_t *b = rsw_block_chart("bars", id, title, "link", "", "bytes", "B");
		json_t *cats = json_array(), *d = json_array(), *flows = json_array();
		for (unsigned i = 0; i < r->n_links; i++) {
			if (r->link[i].tier != k)
				continue;
			char label[160];
			link_name(z, &r->link[i], label, sizeof(label));
			json_array_append_new(cats, json_string(label));
			json_array_append_new(d, json_integer((json_int_t)r->link[i].bytes));
			json_array_append_new(flows, json_integer((json_int_t)r->link[i].flows));
		}
		json_object_set_new(b, "categories", cats);
		json_object_set_new(b, "flows", flows);
		json_object_set_new(b, "policy", json_string(name));
		json_object_set_new(b, "tier", json_string(tier_name[k]));
		json_array_append_new(json_object_get(b, "data"), d);
		json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "bytes"));
		rsw_block_add(s, b);
	}
	return s;
}

/* A --switch-hash rule: GLOB:[policy=NAME][,seed=N][,offset=N]. */
struct switch_rule {
	char glob[128];
	int policy;               /* index of the policy the switches take, or -1: the compared one */
	int has_seed, has_offset;
	uint32_t seed;
	uint8_t offset;
	struct rsw_hash_policy pol; /* what the matching switches hash with, for the policy in turn */
};

struct rules {
	struct switch_rule r[16];
	unsigned n;
};

static int parse_rule(const char *arg, const char *const *names, unsigned n_pol,
		      struct switch_rule *r)
{
	const char *colon = strchr(arg, ':');
	memset(r, 0, sizeof(*r));
	r->policy = -1;
	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(r->glob)) {
		fprintf(stderr, "rocesw hash: --switch-hash %s: expected GLOB:[policy=NAME][,seed=N]"
			"[,offset=N]\n", arg);
		return -1;
	}
	memcpy(r->glob, arg, (size_t)(colon - arg));
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", colon + 1);
	for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *end;
		if (!eq)
			goto bad;
		*eq = 0;
		const char *v = eq + 1;
		if (!strcmp(kv, "policy")) {
			for (unsigned p = 0; p < n_pol; p++)
				if (!strcmp(names[p], v))
					r->policy = (int)p;
			if (r->policy < 0) {
				fprintf(stderr, "rocesw hash: --switch-hash %s: no policy %s in the --policy "
					"files\n", arg, v);
				return -1;
			}
		} else if (!strcmp(kv, "seed")) {
			unsigned long long x = strtoull(v, &end, 0);
			if (!*v || *end || x > 0xFFFFFFFFull)
				goto bad;
			r->has_seed = 1;
			r->seed = (uint32_t)x;
		} else if (!strcmp(kv, "offset")) {
			unsigned long x = strtoul(v, &end, 0);
			if (!*v || *end || x > 15) {
				fprintf(stderr, "rocesw hash: --switch-hash %s: offset is 0 to 15 (bits the "
					"16-bit hash is shifted right)\n", arg);
				return -1;
			}
			r->has_offset = 1;
			r->offset = (uint8_t)x;
		} else {
			goto bad;
		}
	}
	return 0;
bad:
	fprintf(stderr, "rocesw hash: --switch-hash %s: expected GLOB:[policy=NAME][,seed=N]"
		"[,offset=N]\n", arg);
	return -1;
}

static const struct rsw_hash_policy *rule_policy(void *ctx, const char *name)
{
	struct rules *rs = ctx;
	for (unsigned i = rs->n; i-- > 0;)
		if (!fnmatch(rs->r[i].glob, name, 0))
			return &rs->r[i].pol;
	return NULL;
}

/* The page's head: the zone, the traffic and the switch rules. */
static json_t *zone_page(const struct rsw_lab_traffic *t, const char *zone,
			 const char *const *rule_args, unsigned n_rules)
{
	char title[600], sub[200];
	snprintf(title, sizeof(title), "rocesw hash lab over %s", zone);
	snprintf(sub, sizeof(sub), "%zu packets, %zu flows; every chart has the same y axis",
		 t->n_pkts, t->n_flows);
	for (unsigned i = 0; i < n_rules; i++)
		snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), "; switches %s", rule_args[i]);
	return json_pack("{s:s, s:s, s:[]}", "title", title, "subtitle", sub, "blocks");
}

/* Each switch rule's policy while policy p runs: its own, or p's, with its seed and offset. */
static void rules_for_policy(struct rules *rules, unsigned p,
			     const struct rsw_hash_policy *const *pols)
{
	for (unsigned i = 0; i < rules->n; i++) {
		struct switch_rule *sr = &rules->r[i];
		sr->pol = *pols[sr->policy >= 0 ? (unsigned)sr->policy : p];
		if (sr->has_seed)
			sr->pol.seed = sr->seed;
		if (sr->has_offset)
			sr->pol.offset = sr->offset;
	}
}

/* --json: the zone, the switch rules, the traffic and every policy's result (ps, taken). */
static void print_json(json_t *root, const struct rsw_lab_traffic *t, const char *zone,
		       const char *const *rule_args, unsigned n_rules, json_t *ps)
{
	json_object_set_new(root, "zone", json_string(zone));
	json_t *sh = json_array();
	for (unsigned i = 0; i < n_rules; i++)
		json_array_append_new(sh, json_string(rule_args[i]));
	json_object_set_new(root, "switch_hash", sh);
	json_object_set_new(root, "packets", json_integer((json_int_t)t->n_pkts));
	json_object_set_new(root, "flows", json_integer((json_int_t)t->n_flows));
	json_object_set_new(root, "policies", ps);
	json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
}

/* The zone, every policy run over it and the outputs written from one document. */
int rsw_cmd_hash_zone(const struct rsw_lab_traffic *t, const char *zone, const char *const *names,
		      const struct rsw_hash_policy *const *pols, unsigned n_pol, int json,
		      const char *html, const char *const *rule_args, unsigned n_rules)
{
	static struct rules rules;
	rules.n = n_rules;
	for (unsigned i = 0; i < n_rules; i++)
		if (parse_rule(rule_args[i], names, n_pol, &rules.r[i]) < 0)
			return 2;
	char err[2048];
	static struct rsw_zone z;
	static struct rsw_zone_lab r;
	if (rsw_zone_detect(zone, err, sizeof(err)) <= 0) {
		fprintf(stderr, "rocesw hash: --zone %s: %s\n", zone,
			err[0] ? err : "not a zone config (no SWITCH table)");
		return 1;
	}
	if (rsw_eal_init_quiet("rocesw") < 0)
		return 1;
	rsw_fib_compact_ipv4(1); /* route tables sized to their routes, as replay's */
	json_t *root = json_object(), *ps = json_array();
	json_t *page = html ? zone_page(t, zone, rule_args, n_rules) : NULL;
	if (!json)
		for (unsigned i = 0; i < n_rules; i++)
			printf("switches %s\n", rule_args[i]);
	int rc = 0;
	for (unsigned p = 0; p < n_pol && rc == 0; p++) {
		struct rsw_zone_opts o = {.ecn_seed = 1, .policy = pols[p],
					  .switch_policy = n_rules ? rule_policy : NULL,
					  .switch_policy_ctx = &rules};
		rules_for_policy(&rules, p, pols);
		err[0] = 0;
		if (rsw_zone_load(zone, &o, &z, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			rc = 1;
			break;
		}
		if (rsw_lab_zone(t, &z, &r) < 0) {
			fprintf(stderr, "rocesw hash: out of memory\n");
			rc = 1;
			rsw_zone_free(&z);
			break;
		}
		if (page)
			rsw_block_add(page, html_policy(p, names[p], &z, &r));
		if (json)
			json_array_append_new(ps, result_json(names[p], &z, &r));
		else
			print_result(names[p], &z, &r);
		rsw_zone_free(&z);
	}
	if (rc == 0 && json) {
		print_json(root, t, zone, rule_args, n_rules, ps);
	} else if (rc == 0) {
		printf("\n%zu flows; tiers: up = links sent from ports of role uplink, down = role "
		       "downlink; idle: links that carried nothing; fat collisions: links carrying "
		       "two or more of the N largest flows, N = links in the tier\n", t->n_flows);
	}
	if (!(rc == 0 && json))
		json_decref(ps); /* not handed to root */
	json_decref(root);
	if (page) {
		rsw_lab_share_y(json_object_get(page, "blocks"));
		if (rc == 0 && rsw_page_write(html, page) < 0) {
			fprintf(stderr, "rocesw hash: cannot write %s: %s\n", html,
				strerror(errno));
			rc = 1;
		}
		json_decref(page);
	}
	return rc;
}
