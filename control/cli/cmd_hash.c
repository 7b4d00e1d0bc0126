/* `rocesw hash`: judge ECMP hash policies on captured traffic before they reach hardware. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include <rte_hash_crc.h>

#include "cmd.h"
#include "dataplane/config/config.h"
#include "dataplane/hash/hash_algo.h"
#include "gen.h"
#include "hash_lab.h"
#include "hash_zone.h"
#include "hash_lab_html.h"

#define MAX_POLICIES 16
#define ZONE_ONLY_OPTS "--members, --buckets, --no-resilient, --in-port, --fail, --seed, " \
	"--seed-sweep and --bench"
#define MAX_PCAPS 600

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw hash --policy F [--policy F ...] --pcap F [--pcap F ...]\n"
		"                   [--members N] [--buckets N | --no-resilient] [--in-port N]\n"
		"                   [--fail M ...] [--seed N] [--json]\n"
		"       rocesw hash --policy F ... --pcap F ... --zone Z [--switch-hash R ...] [--json]\n"
		"\n"
		"Hashes every IP packet of the captures with each policy (the dataplane's own hash\n"
		"stage), spreads them over N ECMP members and compares the policies side by side:\n"
		"flows, packets and bytes per member, max/mean load, Jain's fairness index, and\n"
		"collisions among the N largest flows. docs/hash-lab.md explains each number.\n"
		"\n"
		"  --policy F     a file with HASH_POLICY entries and/or SWITCH_HASH|GLOBAL (read as the\n"
		"                 policy named default), e.g. a switch config; repeatable\n"
		"  --pcap F       Ethernet capture; repeatable; all are one traffic mix\n"
		"  --gen \"SPEC\"   traffic from rocesw gen instead of (or beside) captures, e.g.\n"
		"                 --gen \"--pattern ring --hosts 16 --qps 4 --qp-mode split\"\n"
		"  --members N    ECMP width (default 8, at most 256)\n"
		"  --buckets N    resilient bucket table size (default 4096)\n"
		"  --no-resilient member = hash %% N, as a plain ECMP group\n"
		"  --in-port N    value of the IN_PORT hash field (default 0)\n"
		"  --fail M       member M fails (repeatable, M < 64): which flows move with the\n"
		"                 resilient table and with plain modulo, and the load afterwards\n"
		"  --seed N       seed of the RANDOM algorithm (default fixed)\n"
		"  --seed-sweep N also run each policy with hash seeds 0..N-1 and report the best and\n"
		"                 worst max/mean: how much luck the policy needs\n"
		"  --zone Z       instead of one ECMP group: follow every flow through the switches\n"
		"                 and links of zone config Z (docs/replay.md), from the port of its\n"
		"                 source address's neighbour entry, each switch hashing with the policy\n"
		"                 given (its groups, buckets and seeds from its config); judge the up\n"
		"                 and down tiers of switch-to-switch links\n"
		"  --switch-hash GLOB:[policy=NAME][,seed=N][,offset=N]\n"
		"                 with --zone: switches whose name matches GLOB (e.g. 'ctsw*') hash\n"
		"                 with policy NAME, or the compared policy with this seed and/or\n"
		"                 offset (what hardware sets per device); repeatable, last match wins\n"
		"  --json         one JSON document instead of tables\n"
		"  --html FILE    also write a self-contained page with a bar chart per policy (per\n"
		"                 tier of links with --zone)\n"
		"  --bench R      also hash the traffic R times per policy and print the rate on\n"
		"                 stderr, beside DPDK's rte_hash_crc over 16 header bytes per packet\n"
		"\n"
		"rocesw hash explain --help: the bytes, hash, bucket and member of one frame.\n"
		"rocesw hash export --help: a policy as SONiC SWITCH_HASH configuration.\n");
}

struct lab_policy {
	char name[RSW_NAME_MAX * 2];
	struct rsw_hash_policy pol;
};

static int load_policies(const char *path, struct lab_policy *out, unsigned *n)
{
	char err[1024];
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_config_hash_policies(path, txn, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", txn ? err : "out of memory");
		rsw_txn_free(txn);
		return -1;
	}
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (*n == MAX_POLICIES) {
			fprintf(stderr, "rocesw hash: more than %d policies\n", MAX_POLICIES);
			rsw_txn_free(txn);
			return -1;
		}
		struct lab_policy *p = &out[(*n)++];
		snprintf(p->name, sizeof(p->name), "%s", w->u.policy.name);
		p->pol = w->u.policy.pol;
		for (unsigned k = 0; k + 1 < *n; k++)
			if (!strcmp(out[k].name, p->name)) {
				/* the same name from two files: say which file */
				const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
				snprintf(p->name, sizeof(p->name), "%s:%s", base, w->u.policy.name);
			}
	}
	rsw_txn_free(txn);
	return 0;
}

struct sweep_result {
	uint32_t best_seed, worst_seed;
	double best, worst;
};

/* max/mean of the policy under hash seeds 0..n-1. */
static void seed_sweep(const struct rsw_lab_traffic *t, const struct lab_policy *lp, uint16_t in_port,
		       uint64_t rnd_seed, unsigned members, uint32_t buckets, uint64_t n,
		       uint32_t *hash, uint16_t *member, struct sweep_result *sr)
{
	struct lab_policy p = *lp;
	sr->best = 1e300;
	sr->worst = -1;
	for (uint64_t s = 0; s < n; s++) {
		struct rsw_lab_result r;
		p.pol.seed = (uint32_t)s;
		rsw_lab_hash(t, &p.pol, in_port, rnd_seed, hash);
		if (rsw_lab_assign(t, hash, members, buckets, 0, member) < 0)
			return;
		rsw_lab_metrics(t, member, members, 0, &r);
		if (r.max_mean < sr->best) {
			sr->best = r.max_mean;
			sr->best_seed = (uint32_t)s;
		}
		if (r.max_mean > sr->worst) {
			sr->worst = r.max_mean;
			sr->worst_seed = (uint32_t)s;
		}
	}
}

/* Why a sweep found every seed alike, said plainly: a CRC's initial value XORs one constant into
 * the hash of every key of a given length (CRC is affine in its initial value), and with a
 * power-of-two member count (and bucket count) hash mod members then only renames the members:
 * the loads, max/mean and Jain stay the same for every seed. */
static const char *sweep_note(const struct lab_policy *p, unsigned members, uint32_t buckets)
{
	int pow2 = !(members & (members - 1)) && !(buckets & (buckets - 1));
	const char *a = rsw_hash_algo_name(p->pol.algo);
	if (!strncmp(a, "CRC", 3) && pow2)
		return "no seed changed anything, and none can: a CRC seed XORs the same constant into "
		       "every hash, which with a power-of-two member count only renames the members. "
		       "Vary the hash offset, the fields or the algorithm (per switch) instead.";
	return "no seed changed anything on this traffic.";
}

struct fail_result {
	size_t own, moved_resilient, moved_modulo;
	double max_mean_resilient, max_mean_modulo;
};

static void print_tables(const struct rsw_lab_traffic *t, unsigned n_pol, const struct lab_policy *pol,
			 const struct rsw_lab_result *res, const struct fail_result *fr,
			 uint64_t fail_mask, unsigned members, uint32_t buckets, unsigned n_pcaps)
{
	printf("traffic: %zu packets, %zu flows from %u capture%s (not IP: %lu, malformed: %lu)\n",
	       t->n_pkts, t->n_flows, n_pcaps, n_pcaps == 1 ? "" : "s",
	       (unsigned long)t->skipped_not_ip, (unsigned long)t->skipped_malformed);
	if (buckets)
		printf("members: %u, resilient table of %u buckets\n\n", members, buckets);
	else
		printf("members: %u, member = hash %% %u\n\n", members, members);
	printf("%-8s", "member");
	for (unsigned p = 0; p < n_pol; p++)
		printf("  %-28.28s", pol[p].name);
	printf("\n%-8s", "");
	for (unsigned p = 0; p < n_pol; p++)
		printf("  %8s %8s %10s", "flows", "packets", "bytes");
	printf("\n");
	for (unsigned m = 0; m < members; m++) {
		printf("%-8u", m);
		for (unsigned p = 0; p < n_pol; p++)
			printf("  %8lu %8lu %10lu", (unsigned long)res[p].flows[m],
			       (unsigned long)res[p].packets[m], (unsigned long)res[p].bytes[m]);
		printf("\n");
	}
	printf("%-8s", "max/mean");
	for (unsigned p = 0; p < n_pol; p++)
		printf("  %28.2f", res[p].max_mean);
	printf("\n%-8s", "jain");
	for (unsigned p = 0; p < n_pol; p++)
		printf("  %28.3f", res[p].jain);
	printf("\n%-8s", "fat");
	for (unsigned p = 0; p < n_pol; p++) {
		char b[64];
		snprintf(b, sizeof(b), "%u of %u largest share", res[p].fat_flows_colliding, res[p].fat_n);
		printf("  %28s", b);
	}
	printf("\n");
	printf("(max/mean is also the busiest link's completion time over a perfect spread)\n");
	if (!fail_mask)
		return;
	printf("\nfailing members");
	for (unsigned m = 0; m < 64; m++)
		if (fail_mask >> m & 1)
			printf(" %u", m);
	printf(":\n");
	for (unsigned p = 0; p < n_pol; p++)
		printf("  %-28.28s flows on them %zu; moved: resilient %zu, modulo %zu; "
		       "max/mean after: resilient %.2f, modulo %.2f\n", pol[p].name, fr[p].own,
		       fr[p].moved_resilient, fr[p].moved_modulo, fr[p].max_mean_resilient,
		       fr[p].max_mean_modulo);
}

static json_t *result_json(const struct lab_policy *p, const struct rsw_lab_result *r,
			   const struct fail_result *fr, uint64_t fail_mask)
{
	json_t *o = json_object(), *mem = json_array();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "algorithm", json_string(rsw_hash_algo_name(p->pol.algo)));
	for (unsigned m = 0; m < r->n_members; m++) {
		json_t *x = json_object();
		json_object_set_new(x, "member", json_integer(m));
		json_object_set_new(x, "flows", json_integer((json_int_t)r->flows[m]));
		json_object_set_new(x, "packets", json_integer((json_int_t)r->packets[m]));
		json_object_set_new(x, "bytes", json_integer((json_int_t)r->bytes[m]));
		json_array_append_new(mem, x);
	}
	json_object_set_new(o, "members", mem);
	json_object_set_new(o, "max_mean", json_real(r->max_mean));
	json_object_set_new(o, "jain", json_real(r->jain));
	json_object_set_new(o, "fat_flows", json_integer(r->fat_n));
	json_object_set_new(o, "fat_collisions", json_integer(r->fat_collisions));
	json_object_set_new(o, "fat_flows_colliding", json_integer(r->fat_flows_colliding));
	if (fail_mask) {
		json_t *f = json_object(), *ms = json_array();
		for (unsigned m = 0; m < 64; m++)
			if (fail_mask >> m & 1)
				json_array_append_new(ms, json_integer(m));
		json_object_set_new(f, "members", ms);
		json_object_set_new(f, "own_flows", json_integer((json_int_t)fr->own));
		json_object_set_new(f, "moved_resilient", json_integer((json_int_t)fr->moved_resilient));
		json_object_set_new(f, "moved_modulo", json_integer((json_int_t)fr->moved_modulo));
		json_object_set_new(f, "max_mean_after_resilient", json_real(fr->max_mean_resilient));
		json_object_set_new(f, "max_mean_after_modulo", json_real(fr->max_mean_modulo));
		json_object_set_new(o, "fail", f);
	}
	return o;
}

/* What moves when fail_mask members fail, with a resilient table and with plain modulo. */
static int failure(const struct rsw_lab_traffic *t, const uint32_t *hash, unsigned members,
		   uint32_t buckets, uint64_t fail_mask, struct fail_result *fr)
{
	uint32_t b = buckets ? buckets : 4096;
	size_t n = t->n_pkts + 1;
	uint16_t *r0 = malloc(n * 2), *r1 = malloc(n * 2), *m0 = malloc(n * 2), *m1 = malloc(n * 2);
	int rc = -1;
	if (!r0 || !r1 || !m0 || !m1 || rsw_lab_assign(t, hash, members, b, 0, r0) < 0 ||
	    rsw_lab_assign(t, hash, members, b, fail_mask, r1) < 0 ||
	    rsw_lab_assign(t, hash, members, 0, 0, m0) < 0 ||
	    rsw_lab_assign(t, hash, members, 0, fail_mask, m1) < 0)
		goto out;
	struct rsw_lab_result after;
	fr->moved_resilient = rsw_lab_moved_flows(t, r0, r1);
	fr->moved_modulo = rsw_lab_moved_flows(t, m0, m1);
	/* flows whose member failed (resilient view: they have to move) */
	/* a flag per flow, set once: a counter would wrap after 256 packets and count the flow again */
	bool *seen = calloc(t->n_flows + 1, sizeof(*seen));
	fr->own = 0;
	for (size_t i = 0; seen && i < t->n_pkts; i++) {
		if (seen[t->flow[i]])
			continue;
		seen[t->flow[i]] = true;
		if (fail_mask >> r0[i] & 1)
			fr->own++;
	}
	free(seen);
	rsw_lab_metrics(t, r1, members, fail_mask, &after);
	fr->max_mean_resilient = after.max_mean;
	rsw_lab_metrics(t, m1, members, fail_mask, &after);
	fr->max_mean_modulo = after.max_mean;
	rc = 0;
out:
	free(r0);
	free(r1);
	free(m0);
	free(m1);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Hashing rate of a policy over traffic already in memory, and of a public baseline doing the
 * least a hash stage can: DPDK's rte_hash_crc (CRC32C, SSE4.2) over 16 bytes of IP header. */
static void bench_policy(const struct rsw_lab_traffic *t, const struct lab_policy *p,
			 uint16_t in_port, uint64_t seed, uint32_t *hash, uint64_t rounds)
{
	double t0 = now_s();
	for (uint64_t r = 0; r < rounds; r++)
		rsw_lab_hash(t, &p->pol, in_port, seed, hash);
	double t1 = now_s();
	uint32_t sink = 0;
	for (uint64_t r = 0; r < rounds; r++)
		for (size_t i = 0; i < t->n_pkts; i++)
			sink ^= rte_hash_crc(t->frame[i] + t->meta[i].l3_off + 4, 16, (uint32_t)r);
	double t2 = now_s();
	double n = (double)t->n_pkts * (double)rounds;
	double ours = n / (t1 - t0) / 1e6, base = n / (t2 - t1) / 1e6;
	fprintf(stderr, "bench %s: %.0f packets, %.2f Mpps; rte_hash_crc baseline %.2f Mpps; "
		"ratio %.2f (%u)\n", p->name, n, ours, base, ours / base, sink & 1);
}

/* Runs the generator on spec into a fresh directory and appends its captures to pcaps.
 * Returns the number of hosts, or 0 after printing the error. */
static unsigned generate(const char *spec, char *dir, char paths[][sizeof("/tmp/rocesw-hash-gen.XXXXXX") + 16],
			 const char **pcaps, unsigned *n_pcaps)
{
	char buf[1024], *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	argv[argc++] = "gen";
	for (char *tok = strtok(buf, " \t"); tok && argc < 63; tok = strtok(NULL, " \t"))
		argv[argc++] = tok;
	argv[argc] = NULL;
	struct rsw_gen_cfg c;
	const char *out;
	if (rsw_gen_parse(argc, argv, &c, &out, 0) != 0)
		return 0;
	if (c.hosts + *n_pcaps > MAX_PCAPS) {
		fprintf(stderr, "rocesw hash: --gen with %u hosts: at most %u captures in all\n",
			c.hosts, MAX_PCAPS);
		return 0;
	}
	char err[1024];
	uint64_t packets;
	if (!mkdtemp(dir)) {
		fprintf(stderr, "rocesw hash: --gen: cannot make %s: %s\n", dir, strerror(errno));
		return 0;
	}
	if (rsw_gen_write(&c, dir, &packets, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw hash: --gen: %s\n", err);
		return 0;
	}
	for (unsigned h = 0; h < c.hosts; h++) {
		snprintf(paths[h], sizeof(paths[h]), "%s/h%u.pcap", dir, h);
		pcaps[(*n_pcaps)++] = paths[h];
	}
	return c.hosts;
}

/* What the command line asked for. */
struct hash_opts {
	struct lab_policy pol[MAX_POLICIES];
	unsigned n_pol;
	const char *pcaps[MAX_PCAPS];
	unsigned n_pcaps, members, in_port;
	uint32_t buckets;
	uint64_t fail_mask, seed, bench, sweep;
	const char *html, *gen_spec, *zone, *rules[16];
	unsigned n_rules;
	int one_group_opt; /* an option of the one-group lab, which --zone does not take */
	int json;
};

static const struct option hash_options[] = {
	{"policy", required_argument, NULL, 'p'}, {"pcap", required_argument, NULL, 'c'},
	{"members", required_argument, NULL, 'm'}, {"buckets", required_argument, NULL, 'b'},
	{"no-resilient", no_argument, NULL, 'n'}, {"in-port", required_argument, NULL, 'i'},
	{"fail", required_argument, NULL, 'f'}, {"seed", required_argument, NULL, 's'},
	{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
	{"bench", required_argument, NULL, 'B'}, {"seed-sweep", required_argument, NULL, 'S'},
	{"html", required_argument, NULL, 'H'}, {"gen", required_argument, NULL, 'G'},
	{"zone", required_argument, NULL, 'Z'}, {"switch-hash", required_argument, NULL, 'W'},
	{NULL, 0, NULL, 0},
};

static const char *option_name(int c)
{
	for (const struct option *o = hash_options; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* The numbers that have a range. */
static const struct {
	int opt;
	unsigned long lo, hi;
} number_ranges[] = {{'m', 1, 256}, {'b', 1, 65536}, {'S', 1, 65536}};

/* Takes one option (its number already in v). Returns -1 to go on, or the exit status. */
static int take_option(struct hash_opts *o, int c, unsigned long v)
{
	for (size_t k = 0; k < sizeof(number_ranges) / sizeof(number_ranges[0]); k++) {
		unsigned long lo = number_ranges[k].lo, hi = number_ranges[k].hi;
		if (c == number_ranges[k].opt && (v < lo || v > hi)) {
			fprintf(stderr, "rocesw hash: --%s must be %lu..%lu\n", option_name(c), lo,
				hi);
			return 2;
		}
	}
	switch (c) {
	case 'Z': o->zone = optarg; break;
	case 'W':
		if (o->n_rules == 16) {
			fprintf(stderr, "rocesw hash: at most 16 --switch-hash rules\n");
			return 2;
		}
		o->rules[o->n_rules++] = optarg;
		break;
	case 'p':
		if (load_policies(optarg, o->pol, &o->n_pol) < 0)
			return 1;
		break;
	case 'c':
		if (o->n_pcaps == MAX_PCAPS) {
			fprintf(stderr, "rocesw hash: more than %d captures\n", MAX_PCAPS);
			return 2;
		}
		o->pcaps[o->n_pcaps++] = optarg;
		break;
	case 'm': o->members = (unsigned)v; break;
	case 'b': o->buckets = (uint32_t)v; break;
	case 'n': o->buckets = 0; break;
	case 'i': o->in_port = (unsigned)v; break;
	case 'f':
		if (v >= 64) {
			fprintf(stderr, "rocesw hash: --fail takes a member below 64\n");
			return 2;
		}
		o->fail_mask |= 1ull << v;
		break;
	case 's': o->seed = v; break;
	case 'B': o->bench = v; break;
	case 'S': o->sweep = v; break;
	case 'j': o->json = 1; break;
	case 'H': o->html = optarg; break;
	case 'G': o->gen_spec = optarg; break;
	case 'h': usage(stdout); return 0;
	default: usage(stderr); return 2;
	}
	return -1;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct hash_opts *o)
{
	int c, rc;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", hash_options, NULL)) != -1) {
		unsigned long v = 0;
		if (c && strchr("mbifsBS", c)) { /* the options that take a number */
			v = strtoul(optarg, &end, 0);
			if (!*optarg || *end) {
				fprintf(stderr, "rocesw hash: --%s expects a number, got '%s'\n",
					option_name(c), optarg);
				return 2;
			}
		}
		o->one_group_opt |= c && strchr("mbnifsSB", c);
		if ((rc = take_option(o, c, v)) >= 0)
			return rc;
	}
	if (optind < argc || !o->n_pol || (!o->n_pcaps && !o->gen_spec)) {
		fprintf(stderr, "rocesw hash: %s\n", optind < argc ? "unexpected argument"
			: !o->n_pol ? "give at least one --policy"
			: "give at least one --pcap or --gen");
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The options that only make sense together. Returns 0, or 2 after saying what is wrong. */
static int check_opts(const struct hash_opts *o)
{
	if (o->n_rules && !o->zone) {
		fprintf(stderr, "rocesw hash: --switch-hash needs --zone\n");
		return 2;
	}
	if (o->zone && o->one_group_opt) {
		fprintf(stderr, "rocesw hash: --zone takes ECMP groups and seeds from the zone's switch "
			"configs; " ZONE_ONLY_OPTS " apply without it\n");
		return 2;
	}
	for (unsigned m = 0; m < 64; m++)
		if ((o->fail_mask >> m & 1) && m >= o->members) {
			fprintf(stderr, "rocesw hash: --fail %u: there are only %u members\n", m,
				o->members);
			return 2;
		}
	if (o->fail_mask && (unsigned)__builtin_popcountll(o->fail_mask) >= o->members) {
		fprintf(stderr, "rocesw hash: --fail leaves no member\n");
		return 2;
	}
	return 0;
}

/* The captures and the generated traffic, loaded into the lab in *t. Returns 0, or the exit
 * status after saying what failed. */
static int load_traffic(struct hash_opts *o, struct rsw_lab_traffic **t)
{
	char gen_dir[] = "/tmp/rocesw-hash-gen.XXXXXX";
	static char gen_paths[MAX_PCAPS][sizeof(gen_dir) + 16];
	unsigned gen_hosts = 0;
	if (o->gen_spec &&
	    (gen_hosts = generate(o->gen_spec, gen_dir, gen_paths, o->pcaps, &o->n_pcaps)) == 0)
		return 2;
	char err[1024];
	*t = rsw_lab_load(o->pcaps, o->n_pcaps, err, sizeof(err));
	for (unsigned h = 0; h < gen_hosts; h++) /* the lab holds the packets now */
		unlink(gen_paths[h]);
	if (gen_hosts)
		rmdir(gen_dir);
	if (!*t) {
		fprintf(stderr, "rocesw hash: %s\n", err);
		return 1;
	}
	return 0;
}

static int run_zone(const struct rsw_lab_traffic *t, const struct hash_opts *o)
{
	const char *names[MAX_POLICIES];
	const struct rsw_hash_policy *pols[MAX_POLICIES];
	for (unsigned p = 0; p < o->n_pol; p++) {
		names[p] = o->pol[p].name;
		pols[p] = &o->pol[p].pol;
	}
	return rsw_cmd_hash_zone(t, o->zone, names, pols, o->n_pol, o->json, o->html, o->rules,
				 o->n_rules);
}

/* What each policy did with the traffic on one ECMP group. */
struct policy_results {
	struct rsw_lab_result *res;
	struct fail_result *fr;
	struct sweep_result *sr;
};

/* Hashes the traffic with every policy: the spread, the failures, the bench and the sweep. */
static int run_group(const struct rsw_lab_traffic *t, const struct hash_opts *o,
		     const struct policy_results *r)
{
	uint32_t *hash = malloc((t->n_pkts + 1) * sizeof(*hash));
	uint16_t *member = malloc((t->n_pkts + 1) * sizeof(*member));
	uint16_t in_port = (uint16_t)o->in_port;
	int rc = -1;
	if (!hash || !member)
		goto out;
	for (unsigned p = 0; p < o->n_pol; p++) {
		const struct lab_policy *lp = &o->pol[p];
		rsw_lab_hash(t, &lp->pol, in_port, o->seed, hash);
		if (rsw_lab_assign(t, hash, o->members, o->buckets, 0, member) < 0 ||
		    (o->fail_mask &&
		     failure(t, hash, o->members, o->buckets, o->fail_mask, &r->fr[p]) < 0))
			goto out;
		rsw_lab_metrics(t, member, o->members, 0, &r->res[p]);
		if (o->bench)
			bench_policy(t, lp, in_port, o->seed, hash, o->bench);
		if (o->sweep)
			seed_sweep(t, lp, in_port, o->seed, o->members, o->buckets, o->sweep, hash,
				   member, &r->sr[p]);
	}
	rc = 0;
out:
	free(hash);
	free(member);
	return rc;
}

static json_t *sweep_json(const struct hash_opts *o, unsigned p, const struct sweep_result *sr)
{
	json_t *w = json_object();
	json_object_set_new(w, "seeds", json_integer((json_int_t)o->sweep));
	json_object_set_new(w, "best_seed", json_integer(sr->best_seed));
	json_object_set_new(w, "best_max_mean", json_real(sr->best));
	json_object_set_new(w, "worst_seed", json_integer(sr->worst_seed));
	json_object_set_new(w, "worst_max_mean", json_real(sr->worst));
	json_object_set_new(w, "changed_anything", json_boolean(sr->best != sr->worst));
	if (sr->best == sr->worst)
		json_object_set_new(w, "note",
				    json_string(sweep_note(&o->pol[p], o->members, o->buckets)));
	return w;
}

/* The whole result as one document: what --json prints and the page draws. */
static json_t *group_json(const struct rsw_lab_traffic *t, const struct hash_opts *o,
			  const struct policy_results *r)
{
	json_t *root = json_object(), *tr = json_object(), *ps = json_array();
	json_object_set_new(tr, "packets", json_integer((json_int_t)t->n_pkts));
	json_object_set_new(tr, "flows", json_integer((json_int_t)t->n_flows));
	json_object_set_new(tr, "not_ip", json_integer((json_int_t)t->skipped_not_ip));
	json_object_set_new(tr, "malformed", json_integer((json_int_t)t->skipped_malformed));
	json_object_set_new(root, "traffic", tr);
	json_object_set_new(root, "members", json_integer(o->members));
	json_object_set_new(root, "buckets", json_integer(o->buckets));
	for (unsigned p = 0; p < o->n_pol; p++) {
		json_t *x = result_json(&o->pol[p], &r->res[p], &r->fr[p], o->fail_mask);
		if (o->sweep)
			json_object_set_new(x, "seed_sweep", sweep_json(o, p, &r->sr[p]));
		json_array_append_new(ps, x);
	}
	json_object_set_new(root, "policies", ps);
	if (o->fail_mask) {
		json_t *fm = json_array();
		for (unsigned m = 0; m < 64; m++)
			if (o->fail_mask >> m & 1)
				json_array_append_new(fm, json_integer(m));
		json_object_set_new(root, "fail_members", fm);
	}
	return root;
}

static void print_sweep(const struct hash_opts *o, const struct sweep_result *sr)
{
	printf("\nseed sweep over %lu seeds (max/mean):\n", (unsigned long)o->sweep);
	for (unsigned p = 0; p < o->n_pol; p++) {
		printf("  %-28.28s best %.2f (seed %u), worst %.2f (seed %u)\n", o->pol[p].name,
		       sr[p].best, sr[p].best_seed, sr[p].worst, sr[p].worst_seed);
		if (sr[p].best == sr[p].worst)
			printf("  %-28.28s %s\n", "",
			       sweep_note(&o->pol[p], o->members, o->buckets));
	}
}

/* The page, the JSON document or the tables. Returns 0, or -1 after saying what failed. */
static int write_group(const struct rsw_lab_traffic *t, const struct hash_opts *o,
		       const struct policy_results *r)
{
	json_t *root = group_json(t, o, r);
	if (o->html && rsw_lab_write_html(o->html, root) < 0) {
		fprintf(stderr, "rocesw hash: cannot write %s\n", o->html);
		json_decref(root);
		return -1;
	}
	if (o->json) {
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	}
	json_decref(root);
	if (!o->json) {
		print_tables(t, o->n_pol, o->pol, r->res, r->fr, o->fail_mask, o->members,
			     o->buckets, o->n_pcaps);
		if (o->sweep)
			print_sweep(o, r->sr);
	}
	return 0;
}

static int one_group(const struct rsw_lab_traffic *t, const struct hash_opts *o)
{
	struct policy_results r = {.res = calloc(o->n_pol, sizeof(*r.res)),
				   .fr = calloc(o->n_pol, sizeof(*r.fr)),
				   .sr = calloc(o->n_pol, sizeof(*r.sr))};
	int rc = 1;
	if (!r.res || !r.fr || !r.sr || run_group(t, o, &r) < 0)
		fprintf(stderr, "rocesw hash: out of memory\n");
	else if (write_group(t, o, &r) == 0)
		rc = 0;
	free(r.res);
	free(r.fr);
	free(r.sr);
	return rc;
}

int rsw_cmd_hash(int argc, char **argv)
{
	struct hash_opts o = {.members = 8, .buckets = 4096};
	struct rsw_lab_traffic *t;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "explain"))
		return rsw_cmd_hash_explain(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "export"))
		return rsw_cmd_hash_export(argc - 1, argv + 1);
	if ((rc = parse_args(argc, argv, &o)) >= 0 || (rc = check_opts(&o)) != 0)
		return rc;
	if ((rc = load_traffic(&o, &t)) != 0)
		return rc;
	rc = o.zone ? run_zone(t, &o) : one_group(t, &o);
	rsw_lab_free(t);
	return rc;
}
