/* ARS in the ECMP stage (docs/ars.md): a flowlet table per group indexed by the flow hash, and
 * each port's quality (EWMA of bytes sent and of bytes queued, quantised into bands) that the
 * front ends sample from their traffic manager through struct rsw_ars_sample: the tables never
 * read the TM. The mutable state hangs off the compiled tables and is carried from one commit's
 * tables to the next (rsw_ars_*_carry), so flowlets and averages survive table changes. The FIB
 * owns this state and hands each group its members: nothing here reads the FIB. */
#ifndef RSW_ARS_H
#define RSW_ARS_H

#include <stdint.h>

#include "../pkt/pkt_meta.h"
#include "table_types.h"

/* Counters of an ARS group, named as SAI names them (SAI_NEXT_HOP_GROUP_ATTR_ARS_*). */
struct rsw_ars_stats {
	uint64_t packets;                /* packets ARS decided */
	uint64_t nexthop_reassignments;  /* ARS_NEXT_HOP_REASSIGNMENTS: a flow's member changed */
	uint64_t port_reassignments;     /* ARS_PORT_REASSIGNMENTS: ... and its egress port */
	uint64_t packet_drops;           /* ARS_PACKET_DROPS: no usable member */
	uint64_t table_full;             /* rocesw: entry held by another active flow (static path) */
};
#define RSW_ARS_STATS 5
extern const char *const rsw_ars_stat_names[RSW_ARS_STATS]; /* SAI's names, in struct order */

struct rsw_flowlet {
	uint64_t last_ns;  /* the flow's last packet */
	uint16_t hash;     /* the flow holding the entry */
	uint16_t port;     /* its member's egress port */
	uint8_t slot;      /* its member slot */
	uint8_t valid;
};

/* The members a group's ARS chooses among: its ECMP group's active members, in the arrays the
 * FIB compiled (owned by the FIB, alive as long as the group). */
struct rsw_ars_members {
	const uint32_t *nh;    /* each active member's next-hop index */
	const uint8_t *slot;   /* ... its member slot */
	const uint16_t *port;  /* ... its egress port */
	uint16_t n;
};

struct rsw_ars_group {
	struct rsw_ars_obj cfg;
	struct rsw_ars_members mb;
	uint64_t idle_ns;
	uint64_t flows_m;           /* rsw_fastmod constant of cfg.max_flows */
	uint64_t rng;               /* ties and random modes: xorshift64 from the profile's seed */
	struct rsw_ars_stats st;
	struct rsw_flowlet flow[];  /* cfg.max_flows */
};

/* One port's quality as sampled (written by the sampler, read by every decision). */
struct rsw_ars_port {
	uint64_t load_avg;   /* EWMA of bytes sent per sampling interval */
	uint64_t queue_avg;  /* EWMA of bytes queued */
	uint64_t last_tx;    /* bytes sent at the last sample */
	uint64_t last_ns;    /* the sampling interval of the last sample */
	uint8_t load_band, queue_band, band; /* 0 (least loaded) .. RSW_ARS_BANDS - 1 */
};

struct rsw_ars_switch {
	struct rsw_ars_profile prof;
	uint64_t sample_ns;
	uint64_t next_sample_ns;    /* claimed atomically by the thread that samples */
	uint64_t samples;
	uint16_t n_ports;
	struct rsw_ars_port port[];
};

/* What the front end reads from its TM for each port at a sample. */
struct rsw_ars_sample {
	uint64_t tx_bytes;     /* bytes the port has sent since it started (monotonic) */
	uint64_t queue_bytes;  /* bytes queued on the port now, all queues */
};

/* Why a packet of an ARS group got its member (struct rsw_ars_decision.why). */
enum rsw_ars_why {
	RSW_ARS_WHY_NOT_MATCHED = 0, /* not ARS traffic (match, family): the static member */
	RSW_ARS_WHY_TABLE_FULL,      /* another flow within its idle time holds the entry: static */
	RSW_ARS_WHY_KEPT,            /* within the idle time (or fixed): the flowlet's member */
	RSW_ARS_WHY_BEST,            /* the one member of the lowest band */
	RSW_ARS_WHY_TIE,             /* several share the lowest band: the group's seeded draw */
	RSW_ARS_WHY_RANDOM,          /* a random mode: the group's seeded draw */
};

/* A candidate's quality as the decision read it. */
struct rsw_ars_quality {
	uint64_t load_avg, queue_avg;
	uint16_t slot, port;
	uint8_t load_band, queue_band, band;
};

#define RSW_ARS_DECISION_MEMBERS 64 /* candidates recorded; n_active says how many there were */

/* What the ARS step saw and decided for one packet, filled only when a front end asks (its
 * trace, docs/ars.md "Explain"): the flowlet entry before the packet, the candidates' quality,
 * the member and why. */
struct rsw_ars_decision {
	uint8_t recorded;      /* the group has ARS and the step ran */
	uint8_t why;           /* enum rsw_ars_why */
	uint8_t mode;          /* enum rsw_ars_mode */
	uint8_t entry_valid;   /* the entry held a flow */
	uint8_t entry_own;     /* ... this packet's flow (its 16-bit hash) */
	uint8_t held_down;     /* the flow's member is no longer active */
	uint8_t new_flowlet;   /* flowlet modes: the flow may take a new member */
	uint8_t best_band;     /* lowest band among the candidates (quality modes) */
	uint16_t entry_hash;   /* the flow holding the entry */
	uint16_t held_slot;    /* its member */
	uint16_t chosen_slot;
	uint16_t n_active, n_tied;
	uint32_t entry;        /* flowlet table index: hash mod max_flows */
	uint32_t max_flows;
	uint64_t now_ns, last_ns, idle_ns; /* idle_ns: the configured idle time */
	uint64_t samples;      /* port-quality samples taken so far (0: all bands 0) */
	struct rsw_ars_quality q[RSW_ARS_DECISION_MEMBERS];
};

/* The band of v between lo (band 0 at or below) and hi (the top band at or above), in
 * RSW_ARS_BANDS equal steps. */
static inline unsigned rsw_ars_band(uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v <= lo)
		return 0;
	if (v >= hi)
		return RSW_ARS_BANDS - 1;
	return (unsigned)((v - lo) * RSW_ARS_BANDS / (hi - lo));
}

/* One EWMA step as the hardware's shift register does it: avg = (avg * (2^e - 1) + x) / 2^e. */
static inline uint64_t rsw_ars_ewma(uint64_t avg, uint64_t x, unsigned e)
{
	return (avg * ((1ull << e) - 1) + x) >> e;
}

/* The quality band of a port: the load and queue bands combined with the profile's weights. */
unsigned rsw_ars_combine(const struct rsw_ars_profile *p, unsigned load_band, unsigned queue_band);

/* Is a sample due at now? Claims it (one thread of many gets true). sw NULL: never. */
int rsw_ars_sample_due(struct rsw_ars_switch *sw, uint64_t now);
/* Update every port's averages and bands from s[0 .. sw->n_ports - 1], for the sampling
 * intervals elapsed since the last sample (the bytes sent spread evenly over them). */
void rsw_ars_sample(struct rsw_ars_switch *sw, uint64_t now, const struct rsw_ars_sample *s);

/* The ECMP stage's ARS step for a packet of group a whose static choice is m->member / nh:
 * returns the next-hop index to use, m->member updated. why, when not NULL, gets what the step
 * saw and decided; dry: decide without changing the flowlet entry, the tie-break stream or the
 * counters (an explain on live tables). */
uint32_t rsw_ars_member(const struct rsw_ars_switch *sw, struct rsw_ars_group *a,
			struct rsw_pkt_meta *m, uint32_t nh, uint64_t now,
			struct rsw_ars_decision *why, int dry);
/* A packet of ARS group a dropped for want of a member. */
void rsw_ars_count_drop(struct rsw_ars_group *a);

/* Does a group of this config take ARS? */
static inline int rsw_ars_wanted(const struct rsw_ars_obj *o)
{
	return o->mode != RSW_ARS_OFF && o->max_flows;
}
/* A group's ARS state (free it with free()): config o, members mb, its tie-break stream
 * seeded from the profile's seed and the group's index. NULL: no memory. */
struct rsw_ars_group *rsw_ars_group_new(const struct rsw_ars_obj *o,
					const struct rsw_ars_members *mb, uint64_t seed,
					uint32_t index);
/* The switch's ARS state (free it with free()): profile p, n_ports ports. NULL: no memory. */
struct rsw_ars_switch *rsw_ars_switch_new(const struct rsw_ars_profile *p, uint16_t n_ports);
/* Carry the mutable state from the tables being replaced to the new ones, before they are
 * published: the ports' averages and the sample clock; a same-named group's counters,
 * tie-break stream and (same size) flowlets. */
void rsw_ars_switch_carry(struct rsw_ars_switch *next, const struct rsw_ars_switch *prev);
void rsw_ars_group_carry(struct rsw_ars_group *next, const struct rsw_ars_group *prev);

const char *rsw_ars_mode_name(unsigned mode);

#endif
