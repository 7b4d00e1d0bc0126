/* Traffic-manager settings as the control plane writes them: pools in the switch profile, and per
 * port the resolved PG and queue buffer profiles, scheduler, WRED and watchdog of each queue. The
 * config compiler resolves SONiC's named profiles (BUFFER_PROFILE, SCHEDULER, WRED_PROFILE) into
 * these values; the names are kept for `show`. */
#ifndef RSW_TM_CFG_H
#define RSW_TM_CFG_H

#include <stdint.h>

#include "buffer.h"
#include "pfcwd.h"
#include "sched.h"
#include "wred.h"

#define RSW_TM_NAME_MAX 48
/* ports of one switch: the tables' bound (RSW_MAX_PORTS) too */
#define RSW_TM_MAX_PORTS 256
#define RSW_TM_PGS 8

/* How the compiler read BUFFER_PROFILE `size` and BUFFER_POOL `xoff` (docs/tm.md, "Buffer
 * conventions"): the TM itself only sees the result (reserve, headroom, shared and headroom
 * pools). */
enum rsw_buf_convention { RSW_BUF_MELLANOX = 0, RSW_BUF_BROADCOM };

struct rsw_tm_pools {
	uint8_t n_pools;
	uint8_t convention;       /* enum rsw_buf_convention */
	struct rsw_buf_pool_cfg pool[RSW_BUF_POOLS];
	char name[RSW_BUF_POOLS][RSW_TM_NAME_MAX];
	uint64_t pfcwd_poll_ns;   /* PFC_WD|GLOBAL POLL_INTERVAL */
	uint64_t ecn_seed;        /* seed of the WRED random source */
};

struct rsw_tm_port_cfg {
	uint8_t unshaped;         /* PORT.speed `line`: drain as fast as the device takes */
	uint8_t pfc_enable;       /* lossless priorities (PORT_QOS_MAP.pfc_enable) */
	uint8_t pfcwd_enable;     /* PORT_QOS_MAP.pfcwd_sw_enable */
	uint8_t pfcwd_set;        /* pfcwd_sw_enable given (else it follows pfc_enable) */
	uint16_t pfc_pause_quanta; /* time carried by the XOFF frames this port sends */
	struct rsw_buf_profile_cfg pg[RSW_TM_PGS];
	struct rsw_buf_profile_cfg queue[RSW_TM_QUEUES];
	struct rsw_sched_cfg sched;
	struct rsw_wred wred[RSW_TM_QUEUES];
	struct rsw_pfcwd_cfg wd[RSW_TM_QUEUES];
	char pg_profile[RSW_TM_PGS][RSW_TM_NAME_MAX];
	char queue_profile[RSW_TM_QUEUES][RSW_TM_NAME_MAX];
	char scheduler[RSW_TM_QUEUES][RSW_TM_NAME_MAX];
	char wred_profile[RSW_TM_QUEUES][RSW_TM_NAME_MAX];
};

/* What the traffic manager reads of a switch's tables: the pools and, per port, its settings, line
 * speed and name. Compiled with the tables (dataplane/tables/fib.c) and published with them:
 * immutable once published, replaced whole by a commit. Kept apart from the ingress tables, which
 * the TM never reads, and cold beside them. */
struct rsw_tm_config {
	uint16_t n_ports;
	struct rsw_tm_pools pools;
	struct rsw_tm_port_cfg port[RSW_TM_MAX_PORTS];
	uint32_t speed_mbps[RSW_TM_MAX_PORTS];
	char port_name[RSW_TM_MAX_PORTS][RSW_TM_NAME_MAX];
	/* derived by rsw_tm_config_finish, so the per-event checks read one small record instead
	 * of a port's whole settings */
	struct rsw_tm_port_brief {
		uint8_t pfc_enable;   /* port[p].pfc_enable */
		uint8_t wd_enable;    /* queues whose watchdog is enabled */
		uint64_t refresh_ns;  /* XOFF refresh: half the pause its frames carry */
		/* port[p].pg[].reserved: a PG within it has nothing to say (one line per port for
		 * the check after every arrival and departure, not the profile's) */
		uint32_t pg_reserved[RSW_TM_PGS];
	} __attribute__((aligned(64))) brief[RSW_TM_MAX_PORTS]; /* a line each, not 48 bytes */
	/* What admission, dequeue and the PFC checks read of one (port, queue) and one (port, PG),
	 * copied from port[p] by rsw_tm_config_finish into records of their own lines: a port's
	 * settings are 2.8 KB, and a hop read a few fields spread over them (the profile's
	 * thresholds, the WRED curve, the watchdog's action). Only the switch's ports are filled
	 * (those beyond stay untouched zero pages). */
	struct rsw_tm_queue_hot_cfg {
		struct rsw_buf_profile_cfg prof; /* port[p].queue[q] */
		uint8_t wd_drop;                 /* port[p].wd[q].action is drop */
		/* wred's, so that admission, dequeue and release read this line alone, and the
		 * curve's only above Kmin (where a mark is drawn) */
		uint8_t mark_on_enqueue;
		uint8_t ecn;
		uint8_t pooled;                  /* pools.n_pools is not 0 (a release reads this) */
		uint64_t kmin;
		struct rsw_wred wred;            /* port[p].wred[q] (second line) */
	} __attribute__((aligned(64))) queue_hot[RSW_TM_MAX_PORTS][RSW_TM_QUEUES];
	struct rsw_tm_pg_hot_cfg {
		struct rsw_buf_profile_cfg prof; /* port[p].pg[pg] */
		/* brief[p].pfc_enable has this PG: the check after an arrival reads this line,
		 * which admission read, not the port's brief */
		uint8_t pfc;
		uint8_t pooled; /* pools.n_pools is not 0: a release reads no other line of these */
	} __attribute__((aligned(64))) pg_hot[RSW_TM_MAX_PORTS][RSW_TM_PGS];
};

_Static_assert(__builtin_offsetof(struct rsw_tm_queue_hot_cfg, wred) == 64,
	       "what every packet reads of a queue's settings in its first line");

/* Fills the derived fields of c (brief) from its settings: after compiling, before publishing. */
void rsw_tm_config_finish(struct rsw_tm_config *c);

/* Whether a and b hold the same settings (and derived records) for the same ports, but for the
 * ECN random source's seed: a TM reads that when it is made, from its own switch's settings, and
 * then runs on either. Padding is compared too: settings not copied whole may differ in it, and
 * then are not the same. */
int rsw_tm_config_same(const struct rsw_tm_config *a, const struct rsw_tm_config *b);
/* dst (any contents) becomes src: the same for rsw_tm_config_same, zero past src's ports. */
void rsw_tm_config_copy(struct rsw_tm_config *dst, const struct rsw_tm_config *src);

#endif
