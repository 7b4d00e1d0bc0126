/* `rocesw replay --collective SPEC`: a compact string PATTERN[,KEY=VALUE...] or a YAML file whose
 * mapping has `pattern:` and the same keys (docs/replay.md, "Closed-loop hosts"). */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collective_spec.h"
#include "dataplane/tables/table_types.h"
#include "dataplane/config/yaml_doc.h"

static int pattern_of(const char *s, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned p;
	} names[] = {
		{"ring", RSW_COLL_RING}, {"allreduce", RSW_COLL_RING},
		{"tree", RSW_COLL_TREE}, {"allgather", RSW_COLL_ALLGATHER},
		{"reducescatter", RSW_COLL_REDUCE_SCATTER}, {"alltoall", RSW_COLL_ALL_TO_ALL},
		{"all-to-all", RSW_COLL_ALL_TO_ALL}, {"incast", RSW_COLL_INCAST},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*out = names[i].p;
			return 0;
		}
	return -1;
}

/* A byte count with an optional K, M or G (binary) suffix. */
static int bytes_of(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 0);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (1ull << 40) >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int num_of(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int on_off(const char *s, int *out)
{
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1"))
		*out = 1;
	else if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* ranks: host names separated by ':' (or a count: the zone's first N hosts). */
static int ranks_of(const char *s, const struct rsw_zone *z, struct rsw_coll *c, char *err,
		    size_t errlen)
{
	uint64_t n;
	if (num_of(s, 0, ~0ull, &n) == 0) {
		if (n < 2 || n > z->n_host) {
			snprintf(err, errlen, "ranks=%s: between 2 and the zone's %u hosts", s,
				 z->n_host);
			return -1;
		}
		c->n_ranks = (unsigned)n;
		for (unsigned i = 0; i < n; i++)
			c->rank_host[i] = (uint16_t)i;
		return 0;
	}
	char buf[8192];
	snprintf(buf, sizeof(buf), "%s", s);
	c->n_ranks = 0;
	for (char *save, *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		int h = rsw_zone_host_index(z, t);
		if (h < 0) {
			snprintf(err, errlen, "ranks: no host named '%s' in the zone", t);
			return -1;
		}
		for (unsigned i = 0; i < c->n_ranks; i++)
			if (c->rank_host[i] == h) {
				snprintf(err, errlen, "ranks: host '%s' twice", t);
				return -1;
			}
		if (c->n_ranks == sizeof(c->rank_host) / sizeof(c->rank_host[0])) {
			snprintf(err, errlen, "ranks: too many");
			return -1;
		}
		c->rank_host[c->n_ranks++] = (uint16_t)h;
	}
	if (c->n_ranks < 2) {
		snprintf(err, errlen, "ranks: at least 2");
		return -1;
	}
	return 0;
}

/* drop=HOST@N / ce=HOST@N: the N-th data frame (0-based) HOST sends is lost / CE-marked. */
static int frame_of(const char *s, const struct rsw_zone *z, struct rsw_coll_drop *list,
		    unsigned *n_list)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	char *at = strchr(buf, '@');
	uint64_t n;
	if (!at || *n_list == RSW_COLL_MAX_DROPS)
		return -1;
	*at = 0;
	int h = rsw_zone_host_index(z, buf);
	if (h < 0 || num_of(at + 1, 0, ~0ull, &n) < 0)
		return -1;
	list[(*n_list)++] = (struct rsw_coll_drop){.host = (uint16_t)h, .nth = n};
	return 0;
}

/* ooo=nak | accept | accept:HOST[:HOST...]: which receivers place out-of-order packets. */
static int ooo_of(const char *s, const struct rsw_zone *z, struct rsw_coll *c, char *err,
		  size_t errlen)
{
	memset(c->ooo_accept, 0, sizeof(c->ooo_accept));
	c->ooo_set = 1;
	if (!strcmp(s, "nak"))
		return 0;
	if (!strcmp(s, "accept")) {
		memset(c->ooo_accept, 1, sizeof(c->ooo_accept));
		return 0;
	}
	if (strncmp(s, "accept:", 7) || !s[7]) {
		snprintf(err, errlen, "ooo=%s: expects nak, accept, or accept:HOST[:HOST...] (only "
			 "those hosts accept)", s);
		return -1;
	}
	char buf[8192];
	snprintf(buf, sizeof(buf), "%s", s + 7);
	for (char *save, *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		int h = rsw_zone_host_index(z, t);
		if (h < 0) {
			snprintf(err, errlen, "ooo: no host named '%s' in the zone", t);
			return -1;
		}
		c->ooo_accept[h] = 1;
	}
	return 0;
}

/* dcqcn-* keys: the reaction and notification points' parameters. */
/* What a key's setter works on. */
struct spec_ctx {
	const struct rsw_zone *z;
	struct rsw_coll *c;
	const char **ranks;
	char *err;
	size_t errlen;
};

/* One key of the spec. set checks and stores its value: 0, 1 (the value is not what `want`
 * says) or -1 (err written). Plain keys store into the field at off, of size bytes, a number
 * from lo to hi. */
struct spec_key {
	const char *name;
	int (*set)(const struct spec_key *e, const char *v, struct spec_ctx *x);
	size_t off, size;
	uint64_t lo, hi;
	const char *want;
};

static void *field(const struct spec_key *e, struct spec_ctx *x)
{
	return (char *)x->c + e->off;
}

static void store_uint(void *p, size_t size, uint64_t n)
{
	if (size == 1)
		*(uint8_t *)p = (uint8_t)n;
	else if (size == 2)
		*(uint16_t *)p = (uint16_t)n;
	else if (size == 4)
		*(uint32_t *)p = (uint32_t)n;
	else
		*(uint64_t *)p = n;
}

static int set_uint(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	if (num_of(v, e->lo, e->hi, &n) < 0)
		return 1;
	store_uint(field(e, x), e->size, n);
	return 0;
}

/* A byte count (K, M, G suffixes), at least lo. */
static int set_bytes(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	if (bytes_of(v, &n) < 0 || n < e->lo)
		return 1;
	*(uint64_t *)field(e, x) = n;
	return 0;
}

/* A positive real, below hi when hi is set. */
static int set_real(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	char *end;
	double d = strtod(v, &end);
	if (!*v || *end || d <= 0 || (e->hi && d >= (double)e->hi))
		return 1;
	*(double *)field(e, x) = d;
	return 0;
}

static int set_on_off(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	return on_off(v, (int *)field(e, x)) < 0;
}

static int set_pattern(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return pattern_of(v, &x->c->pattern) < 0;
}

static int set_ranks(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	*x->ranks = v;
	return 0;
}

static int set_mtu(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	if (num_of(v, e->lo, e->hi, &n) < 0 || (n & (n - 1)))
		return 1;
	x->c->mtu = (unsigned)n;
	return 0;
}

static int set_split(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	if (strcmp(v, "even") && strcmp(v, "rr"))
		return 1;
	x->c->split = !strcmp(v, "even");
	return 0;
}

static int set_sport(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	(void)e;
	if (!strcmp(v, "linux"))
		x->c->fixed_sport = 0;
	else if (!strcmp(v, "fixed"))
		x->c->fixed_sport = 4791;
	else if (num_of(v, 1, 65535, &n) == 0)
		x->c->fixed_sport = (uint32_t)n;
	else
		return 1;
	return 0;
}

/* The IB timeout exponent N: 4.096 us x 2^N. */
static int set_ack_timeout(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	if (num_of(v, e->lo, e->hi, &n) < 0)
		return 1;
	x->c->rto_ns = 4096ull << n;
	return 0;
}

static int set_ooo(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return ooo_of(v, x->z, x->c, x->err, x->errlen) < 0 ? -1 : 0;
}

static int set_cts(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	uint64_t n;
	if (!strcmp(v, "off"))
		x->c->cts_window = 0;
	else if (num_of(v, e->lo, e->hi, &n) < 0)
		return 1;
	else
		x->c->cts_window = (unsigned)n;
	return 0;
}

static int set_drop(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return frame_of(v, x->z, x->c->drop, &x->c->n_drop) < 0;
}

static int set_ce(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return frame_of(v, x->z, x->c->ce, &x->c->n_ce) < 0;
}

static int set_ip_base(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return inet_pton(AF_INET, v, x->c->ip_base) != 1;
}

static int set_router_mac(const struct spec_key *e, const char *v, struct spec_ctx *x)
{
	(void)e;
	return rsw_mac_parse(v, x->c->router_mac) < 0;
}

#define AT(f) offsetof(struct rsw_coll, f), sizeof(((struct rsw_coll *)0)->f)
#define UINT(name, f, lo, hi, want) {name, set_uint, AT(f), lo, hi, want}
#define NS_MAX (~0ull >> 2)

/* The spec's keys (docs/replay.md, "Closed-loop hosts"). */
static const struct spec_key spec_keys[] = {
	{"pattern", set_pattern, 0, 0, 0, 0,
	 "ring, tree, allgather, reducescatter, alltoall or incast"},
	{"ranks", set_ranks, 0, 0, 0, 0, NULL},
	{"size", set_bytes, AT(message), 1, 0, "a byte count (K, M, G suffixes)"},
	{"message", set_bytes, AT(message), 1, 0, "a byte count (K, M, G suffixes)"},
	{"chunk", set_bytes, AT(chunk), 0, 0, "a byte count (0: one chunk per step)"},
	{"mtu", set_mtu, 0, 0, 256, 4096, "256, 512, 1024, 2048 or 4096"},
	UINT("qps", qps, 1, 64, "1 to 64"),
	{"split", set_split, 0, 0, 0, 0,
	 "even (each chunk over all QPs) or rr (chunks round-robin)"},
	{"sport", set_sport, 0, 0, 0, 0, "linux, fixed (4791) or a port number"},
	UINT("dscp", dscp, 0, 63, "0 to 63"),
	UINT("cts-dscp", cts_dscp, 0, 63, "0 to 63"),
	UINT("cnp-dscp", cnp_dscp, 0, 63, "0 to 63"),
	UINT("root", root, 0, 1023, "a rank"),
	UINT("ack-every", ack_every, 1, 1u << 20, "packets per ACK (1 or more)"),
	{"ack-timeout", set_ack_timeout, 0, 0, 1, 31,
	 "the IB timeout exponent, 1 to 31 (4.096 us x 2^N)"},
	UINT("rto", rto_ns, 1, NS_MAX, "nanoseconds"),
	UINT("retry", retry_cnt, 0, 7, "0 to 7"),
	{"nak", set_on_off, AT(nak), 0, 0, "on or off"},
	{"ooo", set_ooo, 0, 0, 0, 0, NULL},
	{"cts", set_cts, 0, 0, 0, 1u << 20, "a window in chunks, or off"},
	{"drop", set_drop, 0, 0, 0, 0, "HOST@N (the N-th data frame HOST sends, from 0)"},
	{"ce", set_ce, 0, 0, 0, 0, "HOST@N (the N-th data frame HOST sends, from 0)"},
	{"dcqcn", set_on_off, AT(dcqcn), 0, 0, "on or off"},
	{"dcqcn-g", set_real, AT(dcqcn_p.g), 0, 1, "a gain between 0 and 1 (e.g. 0.00390625)"},
	{"dcqcn-rai", set_real, AT(dcqcn_p.rai_mbps), 0, 0, "a rate in Mb/s"},
	{"dcqcn-rhai", set_real, AT(dcqcn_p.rhai_mbps), 0, 0, "a rate in Mb/s"},
	{"dcqcn-min", set_real, AT(dcqcn_p.min_mbps), 0, 0, "a rate in Mb/s"},
	UINT("dcqcn-k", dcqcn_p.alpha_ns, 1, NS_MAX, "nanoseconds"),
	UINT("dcqcn-t", dcqcn_p.timer_ns, 1, NS_MAX, "nanoseconds"),
	UINT("cnp-interval", dcqcn_p.cnp_interval_ns, 1, NS_MAX, "nanoseconds"),
	{"dcqcn-b", set_bytes, AT(dcqcn_p.byte_counter), 1, 0, "a byte count"},
	UINT("dcqcn-f", dcqcn_p.f, 1, 1000, "1 to 1000"),
	{"ip-base", set_ip_base, 0, 0, 0, 0, "an IPv4 address"},
	UINT("ip-stride", ip_stride, 1, 65536, "1 to 65536"),
	{"router-mac", set_router_mac, 0, 0, 0, 0, "a MAC address"},
};

/* One KEY=VALUE; ranks are resolved at the end (root names a rank). */
static int set_key(const char *k, const char *v, const struct rsw_zone *z, struct rsw_coll *c,
		   const char **ranks, char *err, size_t errlen)
{
	struct spec_ctx x = {z, c, ranks, err, errlen};
	for (size_t i = 0; i < sizeof(spec_keys) / sizeof(spec_keys[0]); i++) {
		const struct spec_key *e = &spec_keys[i];
		if (strcmp(k, e->name))
			continue;
		int r = e->set(e, v, &x);
		if (r > 0)
			snprintf(err, errlen, "%s=%s: expects %s", k, v, e->want);
		return r ? -1 : 0;
	}
	snprintf(err, errlen, "unknown key '%s' (docs/replay.md lists them)", k);
	return -1;
}

static int load_yaml(const char *path, const struct rsw_zone *z, struct rsw_coll *c,
		     const char **ranks, char *ranks_buf, size_t ranks_len, char *err,
		     size_t errlen)
{
	struct ydoc d;
	char e[512];
	if (ydoc_load(&d, path, err, errlen) < 0)
		return -1;
	int rc = 0;
	yaml_node_t *root = ydoc_root(&d);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = ydoc_error(&d, root, "collective", "expects a mapping of keys");
		goto out;
	}
	YDOC_FOREACH_PAIR(&d, root, pair) {
		yaml_node_t *kn = ydoc_node(&d, pair->key), *vn = ydoc_node(&d, pair->value);
		const char *k = ydoc_str(kn);
		if (!k) {
			rc = ydoc_error(&d, kn, "collective", "keys are names");
			goto out;
		}
		if (vn->type == YAML_SEQUENCE_NODE &&
		    (!strcmp(k, "ranks") || !strcmp(k, "drop") || !strcmp(k, "ce"))) {
			if (!strcmp(k, "ranks"))
				ranks_buf[0] = 0;
			YDOC_FOREACH_ITEM(&d, vn, item) {
				const char *v = ydoc_str(ydoc_node(&d, *item));
				if (!v) {
					rc = ydoc_error(&d, vn, k, "expects names");
					goto out;
				}
				if (strcmp(k, "ranks")) {
					if (set_key(k, v, z, c, ranks, e, sizeof(e)) < 0) {
						rc = ydoc_error(&d, vn, k, "%s", e);
						goto out;
					}
					continue;
				}
				size_t l = strlen(ranks_buf);
				snprintf(ranks_buf + l, ranks_len - l, "%s%s", l ? ":" : "", v);
			}
			if (!strcmp(k, "ranks"))
				*ranks = ranks_buf;
			continue;
		}
		const char *v = ydoc_str(vn);
		if (!v) {
			rc = ydoc_error(&d, vn, k, "expects a value");
			goto out;
		}
		if (!strcmp(k, "ranks")) {
			snprintf(ranks_buf, ranks_len, "%s", v);
			*ranks = ranks_buf;
		} else if (set_key(k, v, z, c, ranks, e, sizeof(e)) < 0) {
			rc = ydoc_error(&d, vn, k, "%s", e);
			goto out;
		}
	}
out:
	ydoc_free(&d);
	return rc;
}

_Static_assert(RSW_COLL_MAX_RANKS >= RSW_ZONE_MAX_HOSTS, "a collective may take every host");

int rsw_coll_spec_parse(const char *spec, const struct rsw_zone *z, struct rsw_coll *c,
			char *err, size_t errlen)
{
	static char buf[16384], ranks_buf[16384];
	const char *ranks = NULL;
	char e[1024];
	rsw_coll_defaults(c);
	if (access(spec, R_OK) == 0) {
		if (load_yaml(spec, z, c, &ranks, ranks_buf, sizeof(ranks_buf), err, errlen) < 0)
			return -1;
	} else {
		snprintf(buf, sizeof(buf), "%s", spec);
		char *save, *t = strtok_r(buf, ",", &save);
		if (!t || pattern_of(t, &c->pattern) < 0) {
			snprintf(err, errlen, "--collective %s: starts with a pattern (ring, tree, "
				 "allgather, reducescatter, alltoall, incast) or names a YAML file",
				 spec);
			return -1;
		}
		while ((t = strtok_r(NULL, ",", &save))) {
			char *eq = strchr(t, '=');
			if (!eq) {
				snprintf(err, errlen, "--collective: '%s' is not KEY=VALUE", t);
				return -1;
			}
			*eq = 0;
			if (set_key(t, eq + 1, z, c, &ranks, e, sizeof(e)) < 0) {
				snprintf(err, errlen, "--collective: %s", e);
				return -1;
			}
		}
	}
	if (ranks) {
		if (ranks_of(ranks, z, c, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "--collective: %s", e);
			return -1;
		}
	} else {
		if (z->n_host < 2) {
			snprintf(err, errlen, "--collective: the zone has %u host(s); 2 ranks at least",
				 z->n_host);
			return -1;
		}
		c->n_ranks = z->n_host;
		for (unsigned i = 0; i < z->n_host; i++)
			c->rank_host[i] = (uint16_t)i;
	}
	if (c->root >= c->n_ranks) {
		snprintf(err, errlen, "--collective: root=%u but there are %u ranks", c->root,
			 c->n_ranks);
		return -1;
	}
	uint64_t per = c->pattern == RSW_COLL_INCAST || c->pattern == RSW_COLL_TREE
			       ? c->message : c->message / c->n_ranks;
	if (per < c->qps) {
		snprintf(err, errlen, "--collective: size=%llu leaves less than a byte per QP of "
			 "each chunk (%u ranks, %u QPs)", (unsigned long long)c->message,
			 c->n_ranks, c->qps);
		return -1;
	}
	if (c->chunk && per / c->chunk > (1u << 20)) {
		snprintf(err, errlen, "--collective: chunk=%llu cuts each rank's data into more than "
			 "2^20 chunks", (unsigned long long)c->chunk);
		return -1;
	}
	if (c->chunk && c->chunk < c->qps) {
		snprintf(err, errlen, "--collective: chunk=%llu is smaller than qps=%u",
			 (unsigned long long)c->chunk, c->qps);
		return -1;
	}
	return 0;
}
