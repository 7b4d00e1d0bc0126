/* The flow cache never changes a decision. Two switches built from the same config, one whose
 * ingress keeps a flow cache and one without, take the same frames on rotating ingress ports:
 * one at a time through rsw_pipeline_frame (replay's and inspect's way), and in bursts of 32
 * through rsw_ingress_burst (the live workers' way). Every few hundred frames both commit the
 * same table change (a port down or up, a hash policy's seed): the cache's entries of the old
 * tables must miss. The cache grows as replay's does (empty again each time it doubles).
 * Verdicts, metadata and rewritten bytes must be identical, or it aborts naming the frame. Each
 * side has its own ARS state and RANDOM hash state, which the cache must leave to advance
 * exactly as without it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/config/config.h"
#include "dataplane/pipeline/pipeline.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/flow_cache.h"
#include "dataplane/tables/switch.h"
#include "dataplane/tables/table_write.h"
#include "fuzz_targets.h"

#define BURST 32
#define FRAME_MAX 16384
#define COMMIT_EVERY 499 /* frames between table commits */

struct side {
	struct rsw_switch *sw;
	struct rsw_ingress_ctx ictx;
};

static struct side side[2]; /* [0] with the cache, [1] without */
static struct rsw_flow_cache *cache;
static unsigned long n_frames, n_commits;
static struct {
	uint8_t data[FRAME_MAX];
	uint32_t len;
	uint16_t in_port;
} burst[BURST];
static unsigned n_burst;

static void fail(const char *what, unsigned long frame)
{
	fprintf(stderr, "fuzz_driver cache: frame %lu: %s differ with the cache on and off\n",
		frame, what);
	abort();
}

int rsw_fuzz_cache_init(const char *config)
{
	char err[1024];
	if (rsw_eal_init_quiet("fuzz_driver") < 0)
		return -1;
	rte_log_set_global_level(RTE_LOG_CRIT);
	/* small: evictions and collisions happen too, and growth (replay's cache grows) */
	cache = rsw_flow_cache_new(64);
	if (cache)
		rsw_flow_cache_grow_upto(cache, 256);
	for (unsigned s = 0; s < 2; s++) {
		side[s].sw = rsw_switch_new(NULL, err, sizeof(err));
		if (!side[s].sw || rsw_config_apply(side[s].sw, config, err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz_driver: %s\n", err);
			return -1;
		}
		side[s].ictx.rnd = 0x9E3779B97F4A7C15ull;
		side[s].ictx.cache = s == 0 ? cache : NULL;
	}
	return cache ? 0 : -1;
}

/* The same change committed on both switches: a port down or up, or a policy's new seed. */
static void commit_both(void)
{
	unsigned long c = n_commits++;
	for (unsigned s = 0; s < 2; s++) {
		struct rsw_switch *sw = side[s].sw;
		struct rsw_table_write w = {.op = RSW_W_MODIFY};
		if (c % 2 == 0 || !sw->state->n_pol) {
			unsigned p = (unsigned)(c / 2 % sw->state->n_ports);
			w.table = RSW_T_PORT;
			w.u.port = sw->state->ports[p];
			w.u.port.admin_up = !w.u.port.admin_up;
		} else {
			w.table = RSW_T_HASH_POLICY;
			w.u.policy = sw->state->pol[c / 2 % sw->state->n_pol];
			w.u.policy.pol.seed += 0x1111;
		}
		char err[512];
		struct rsw_txn *txn = rsw_txn_new();
		if (!txn || rsw_txn_add(txn, &w) < 0 ||
		    rsw_switch_commit(sw, txn, err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz_driver cache: commit %lu: %s\n", c,
				txn ? err : "memory");
			abort();
		}
		rsw_txn_free(txn);
		rsw_switch_reap(sw);
	}
}

/* The burst so far through rsw_ingress_burst on both sides. */
static void run_burst(void)
{
	static uint8_t copy[2][BURST][FRAME_MAX];
	struct rsw_pkt_meta meta[2][BURST];
	for (unsigned s = 0; s < 2; s++) {
		const uint8_t *frame[BURST];
		uint16_t idx[BURST], n = 0;
		memset(meta[s], 0, sizeof(meta[s]));
		for (unsigned i = 0; i < n_burst; i++) {
			memcpy(copy[s][i], burst[i].data, burst[i].len);
			frame[i] = copy[s][i];
			if (rsw_parse(copy[s][i], burst[i].len, &meta[s][i]) == 0) {
				meta[s][i].in_port = burst[i].in_port;
				idx[n++] = (uint16_t)i;
			}
		}
		side[s].ictx.now_ns = n_frames * 1000;
		const struct rsw_fib *fib = rsw_switch_fib(side[s].sw);
		rsw_ingress_burst(fib, frame, meta[s], idx, n, &side[s].ictx);
	}
	for (unsigned i = 0; i < n_burst; i++)
		if (memcmp(&meta[0][i], &meta[1][i], sizeof(meta[0][i])))
			fail("burst decisions", n_frames - n_burst + i);
	n_burst = 0;
}

int rsw_fuzz_cache(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX)
		return 0;
	uint16_t in_port = (uint16_t)(n_frames % (side[0].sw->state->n_ports + 1u));
	static uint8_t copy[2][FRAME_MAX];
	struct rsw_pkt_meta m[2];
	struct rsw_verdict v[2];
	for (unsigned s = 0; s < 2; s++) {
		memcpy(copy[s], data, size);
		memset(&m[s], 0, sizeof(m[s]));
		side[s].ictx.now_ns = n_frames * 1000;
		struct rsw_pipeline p = {.fib = rsw_switch_fib(side[s].sw), .ictx = &side[s].ictx};
		v[s] = rsw_pipeline_frame(&p, in_port, copy[s], (uint32_t)size, NULL, &m[s], NULL);
	}
	if (memcmp(&v[0], &v[1], sizeof(v[0])))
		fail("verdicts", n_frames);
	if (memcmp(&m[0], &m[1], sizeof(m[0])))
		fail("decisions", n_frames);
	if (memcmp(copy[0], copy[1], size))
		fail("rewritten frames", n_frames);
	memcpy(burst[n_burst].data, data, size);
	burst[n_burst].len = (uint32_t)size;
	burst[n_burst++].in_port = in_port;
	n_frames++;
	if (n_burst == BURST)
		run_burst();
	if (n_frames % COMMIT_EVERY == 0)
		commit_both();
	return v[0].kind;
}

int rsw_fuzz_cache_fini(void)
{
	if (n_burst)
		run_burst();
	struct rsw_flow_cache_stats st;
	rsw_flow_cache_stats(cache, &st);
	printf("fuzz_driver cache: %lu frames twice (one by one, then in bursts), %lu commits: "
	       "%llu hits, %llu misses, %llu decisions not cached, %u slots after doubling %llu "
	       "times; the same decisions\n",
	       n_frames, n_commits, (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.uncached, cache->mask + 1, (unsigned long long)st.grown);
	for (unsigned s = 0; s < 2; s++)
		rsw_switch_free(side[s].sw);
	rsw_flow_cache_free(cache);
	/* the check is only worth something if the cache answered, and declined, many times, and
	 * grew */
	return st.hits > n_frames / 4 && st.uncached > 0 && st.grown > 0 ? 0 : -1;
}
