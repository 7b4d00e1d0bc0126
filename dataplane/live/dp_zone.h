/* The switches one rocesw-dataplane runs: one (--config) or every switch of a zone file
 * (--zone), each with its own tables, traffic manager, ports and counters, sharing the worker
 * lcores, the RCU state and the packet memory. Switch-to-switch links of a zone are in-memory
 * (dp_link.h); host links are DPDK ports (docs/dataplane.md). */
#ifndef RSW_DP_ZONE_H
#define RSW_DP_ZONE_H

#include <stddef.h>

#include <jansson.h>

#include "dataplane/config/zone.h"
#include "dp_ctx.h"
#include "dp_link.h"
#include "dp_worker.h"

struct rsw_dp_zone_opts {
	const char *config;     /* one switch config, or */
	const char *zone;       /* a zone config (docs/replay.md) */
	int verify_icrc;
	unsigned mbufs;         /* packet memory in frames; 0: from the ports */
	uint64_t idle_max_ns;   /* workers' longest back-off sleep (dp_worker.h); 0: spin */
	unsigned neigh_timeout_s; /* age of learnt neighbours (dp_neigh.h); 0: never */
	unsigned rxq;           /* RX queues per DPDK port (--rxq, RSS); 0: one */
	/* --pin SWITCH=W: every port of the switch on worker W (0-based); the others round-robin */
	unsigned n_pin;
	struct {
		const char *sw;
		unsigned worker;
	} pin[RSW_ZONE_MAX_SWITCHES];
};

struct rsw_dp_zone {
	struct rsw_zone *model;  /* --zone: the loaded zone (it owns the switches' tables) */
	const char *name;        /* the zone's name, or NULL for one switch */
	unsigned n_sw;
	struct rsw_dp *dp[RSW_ZONE_MAX_SWITCHES];
	const char *config[RSW_ZONE_MAX_SWITCHES];  /* each switch's config file */
	char *config_owned[RSW_ZONE_MAX_SWITCHES];  /* ... when a reload changed it */
	unsigned n_links;                     /* directions: 2 per switch-switch link */
	struct rsw_dp_link *link;
	/* per link direction: the model's link, and 0 for a->b, 1 for b->a */
	unsigned *link_of;
	struct rte_rcu_qsbr *qsbr;
	struct rte_mempool *pool;
	unsigned n_workers;
	struct rsw_dp_lcore lc[RSW_DP_MAX_WORKERS];
	/* each worker's flow cache of ingress decisions, for every switch it serves (the tables'
	 * identity is in the key); NULL with ROCESW_FLOW_CACHE=off */
	struct rsw_flow_cache *cache[RSW_DP_MAX_WORKERS];
	int stop; /* set (atomic) by a signal or --duration; the workers and main lcore read it */
};

/* Loads the config(s), probes and starts the ports, creates links and traffic managers, and
 * spreads the ports over the worker lcores. EAL must be up. Returns -1 with a message (what it
 * built is freed by rsw_dp_zone_close). */
int rsw_dp_zone_open(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		     size_t errlen);
/* Starts the workers. */
void rsw_dp_zone_launch(struct rsw_dp_zone *z);
/* Waits until every worker returned (rte_eal_mp_wait_lcore). */
void rsw_dp_zone_wait(struct rsw_dp_zone *z);
/* One line on stderr with the time and the switch (arg: its struct rsw_dp): the traffic
 * manager's events (watchdog) and the control socket's change log. */
void rsw_dp_log_line(void *arg, const char *line);
/* The switch called name, or NULL. */
struct rsw_dp *rsw_dp_zone_switch(const struct rsw_dp_zone *z, const char *name);
/* Frames on the in-memory links. */
uint64_t rsw_dp_zone_in_flight(const struct rsw_dp_zone *z);
struct rsw_dp_totals;
/* Every switch's counters, the links' and what is on them (dp_zone_stats.c). */
json_t *rsw_dp_zone_counters_json(const struct rsw_dp_zone *z);
/* The cycles of paused queues each waiting on the next, over the zone's switches (dp_deadlock.c):
 * {"zone", "paused_queues", "deadlocks": [{"held_us", "cycle": [member...]}]}. One switch has
 * none. NULL with err out of memory. */
json_t *rsw_dp_zone_deadlock_json(const struct rsw_dp_zone *z, char *err, size_t errlen);
/* The final counters t[switch] as JSON: one switch's document, or the zone's; written whole or
 * not at all (whole_file.h). Returns 0, or -1 with err naming the file and the reason. */
int rsw_dp_zone_stats_write_json(const struct rsw_dp_zone *z, const struct rsw_dp_totals *t,
				 const char *path, char *err, size_t errlen);
/* After the workers stopped: closes ports, frees links (returns the frames still on them),
 * traffic managers, tables and memory. */
uint64_t rsw_dp_zone_close(struct rsw_dp_zone *z);

#endif
