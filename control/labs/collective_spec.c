/* `rocesw replay --collective SPEC`: a compact string PATTERN[,KEY=VALUE...] or a YAML file whose
 * mapping has `pattern:` and the same keys (docs/replay.md, "Closed-loop hosts"). */
#include <arpa/inet.h>
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
static int dcqcn_key(const char *k, const char *v, struct rsw_dcqcn_params *p, const char **want)
{
	uint64_t n;
	char *end;
	double d = strtod(v, &end);
	int real_ok = *v && !*end && d > 0;
	if (!strcmp(k, "dcqcn-g")) {
		if (!real_ok || d >= 1)
			*want = "a gain between 0 and 1 (e.g. 0.00390625)";
		else
			p->g = d;
	} else if (!strcmp(k, "dcqcn-rai") || !strcmp(k, "dcqcn-rhai") || !strcmp(k, "dcqcn-min")) {
		if (!real_ok)
			*want = "a rate in Mb/s";
		else
			*(k[6] == 'r' && k[7] == 'a' ? &p->rai_mbps : k[7] == 'h' ? &p->rhai_mbps
										: &p->min_mbps) = d;
	} else if (!strcmp(k, "dcqcn-k") || !strcmp(k, "dcqcn-t") || !strcmp(k, "cnp-interval")) {
		if (num_of(v, 1, ~0ull >> 2, &n) < 0)
			*want = "nanoseconds";
		else
			*(k[0] == 'c' ? &p->cnp_interval_ns : k[6] == 'k' ? &p->alpha_ns
									 : &p->timer_ns) = n;
	} else if (!strcmp(k, "dcqcn-b")) {
		if (bytes_of(v, &n) < 0 || !n)
			*want = "a byte count";
		else
			p->byte_counter = n;
	} else if (!strcmp(k, "dcqcn-f")) {
		if (num_of(v, 1, 1000, &n) < 0)
			*want = "1 to 1000";
		else
			p->f = (unsigned)n;
	} else {
		return 0;
	}
	return 1;
}

/* One KEY=VALUE; ranks are resolved at the end (root names a rank).
 * Long: one short branch per key of the spec, each checking its own value. */
static int set_key(const char *k, const char *v, const struct rsw_zone *z, struct rsw_coll *c,
		   const char **ranks, char *err, size_t errlen)
{
	uint64_t n;
	int b;
	const char *want = NULL;
	if (!strcmp(k, "pattern")) {
		if (pattern_of(v, &c->pattern) < 0)
			want = "ring, tree, allgather, reducescatter, alltoall or incast";
	} else if (!strcmp(k, "ranks")) {
		*ranks = v;
	} else if (!strcmp(k, "size") || !strcmp(k, "message")) {
		if (bytes_of(v, &c->message) < 0 || !c->message)
			want = "a byte count (K, M, G suffixes)";
	} else if (!strcmp(k, "chunk")) {
		if (bytes_of(v, &c->chunk) < 0)
			want = "a byte count (0: one chunk per step)";
	} else if (!strcmp(k, "mtu")) {
		if (num_of(v, 256, 4096, &n) < 0 || (n & (n - 1)))
			want = "256, 512, 1024, 2048 or 4096";
		else
			c->mtu = (unsigned)n;
	} else if (!strcmp(k, "qps")) {
		if (num_of(v, 1, 64, &n) < 0)
			want = "1 to 64";
		else
			c->qps = (unsigned)n;
	} else if (!strcmp(k, "split")) {
		if (!strcmp(v, "even"))
			c->split = 1;
		else if (!strcmp(v, "rr"))
			c->split = 0;
		else
			want = "even (each chunk over all QPs) or rr (chunks round-robin)";
	} else if (!strcmp(k, "sport")) {
		if (!strcmp(v, "linux"))
			c->fixed_sport = 0;
		else if (!strcmp(v, "fixed"))
			c->fixed_sport = 4791;
		else if (num_of(v, 1, 65535, &n) == 0)
			c->fixed_sport = (uint32_t)n;
		else
			want = "linux, fixed (4791) or a port number";
	} else if (!strcmp(k, "dscp") || !strcmp(k, "cts-dscp") || !strcmp(k, "cnp-dscp")) {
		if (num_of(v, 0, 63, &n) < 0)
			want = "0 to 63";
		else
			*(k[0] == 'd' ? &c->dscp : k[1] == 't' ? &c->cts_dscp : &c->cnp_dscp) =
				(uint8_t)n;
	} else if (!strcmp(k, "root")) {
		if (num_of(v, 0, 1023, &n) < 0)
			want = "a rank";
		else
			c->root = (unsigned)n;
	} else if (!strcmp(k, "ack-every")) {
		if (num_of(v, 1, 1u << 20, &n) < 0)
			want = "packets per ACK (1 or more)";
		else
			c->ack_every = (unsigned)n;
	} else if (!strcmp(k, "ack-timeout")) {
		if (num_of(v, 1, 31, &n) < 0)
			want = "the IB timeout exponent, 1 to 31 (4.096 us x 2^N)";
		else
			c->rto_ns = 4096ull << n;
	} else if (!strcmp(k, "rto")) {
		if (num_of(v, 1, ~0ull >> 2, &n) < 0)
			want = "nanoseconds";
		else
			c->rto_ns = n;
	} else if (!strcmp(k, "retry")) {
		if (num_of(v, 0, 7, &n) < 0)
			want = "0 to 7";
		else
			c->retry_cnt = (unsigned)n;
	} else if (!strcmp(k, "nak")) {
		if (on_off(v, &b) < 0)
			want = "on or off";
		else
			c->nak = b;
	} else if (!strcmp(k, "ooo")) {
		if (ooo_of(v, z, c, err, errlen) < 0)
			return -1;
	} else if (!strcmp(k, "cts")) {
		if (!strcmp(v, "off"))
			c->cts_window = 0;
		else if (num_of(v, 0, 1u << 20, &n) < 0)
			want = "a window in chunks, or off";
		else
			c->cts_window = (unsigned)n;
	} else if (!strcmp(k, "drop") || !strcmp(k, "ce")) {
		if (frame_of(v, z, k[0] == 'd' ? c->drop : c->ce, k[0] == 'd' ? &c->n_drop : &c->n_ce)
		    < 0)
			want = "HOST@N (the N-th data frame HOST sends, from 0)";
	} else if (!strcmp(k, "dcqcn")) {
		if (on_off(v, &b) < 0)
			want = "on or off";
		else
			c->dcqcn = b;
	} else if (dcqcn_key(k, v, &c->dcqcn_p, &want)) {
		/* done */
	} else if (!strcmp(k, "ip-base")) {
		if (inet_pton(AF_INET, v, c->ip_base) != 1)
			want = "an IPv4 address";
	} else if (!strcmp(k, "ip-stride")) {
		if (num_of(v, 1, 65536, &n) < 0)
			want = "1 to 65536";
		else
			c->ip_stride = (unsigned)n;
	} else if (!strcmp(k, "router-mac")) {
		if (rsw_mac_parse(v, c->router_mac) < 0)
			want = "a MAC address";
	} else {
		snprintf(err, errlen, "unknown key '%s' (docs/replay.md lists them)", k);
		return -1;
	}
	if (want) {
		snprintf(err, errlen, "%s=%s: expects %s", k, v, want);
		return -1;
	}
	return 0;
}

/* The YAML form: a mapping of the same keys; ranks and drop may be sequences. */
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
