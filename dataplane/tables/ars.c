/* ARS in the ECMP stage: flowlet table, port quality bands, the member choice (docs/ars.md). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ars.h"
#include "fastmod.h"

const char *const rsw_ars_stat_names[RSW_ARS_STATS] = {
	"RSW_ARS_PACKETS",
	"SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS",
	"SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS",
	"SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS",
	"RSW_ARS_FLOWLET_TABLE_FULL",
};

static const char *const mode_names[RSW_ARS_MODES] = {
	"off", "per_flowlet_quality", "per_flowlet_random", "per_packet_quality",
	"per_packet_random", "fixed",
};

const char *rsw_ars_mode_name(unsigned mode)
{
	return mode < RSW_ARS_MODES ? mode_names[mode] : "?";
}

/* Several live workers may decide for one group: counters add atomically, the flowlet entries
 * and the tie-break state are written without locks (a lost update moves one flowlet early, as
 * two pipes of a chip sharing a flowset table may). Replay has one thread. */
#define COUNT(a, field) __atomic_fetch_add(&(a)->st.field, 1, __ATOMIC_RELAXED)

unsigned rsw_ars_combine(const struct rsw_ars_profile *p, unsigned load_band, unsigned queue_band)
{
	unsigned w = (unsigned)p->load_weight + p->queue_weight;
	if (!w)
		return 0;
	return (p->load_weight * load_band + p->queue_weight * queue_band) / w;
}

int rsw_ars_sample_due(struct rsw_ars_switch *sw, uint64_t now)
{
	if (!sw)
		return 0;
	uint64_t next = __atomic_load_n(&sw->next_sample_ns, __ATOMIC_RELAXED);
	if (now < next)
		return 0;
	/* the next grid point after now */
	uint64_t after = now - now % sw->sample_ns + sw->sample_ns;
	return __atomic_compare_exchange_n(&sw->next_sample_ns, &next, after, 0, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}

/* More intervals than this since the last sample change an average no more than this many
 * would (at exponent 4, 0.6 % of the old value is left after 64). */
#define MAX_STEPS 64

void rsw_ars_sample(struct rsw_ars_switch *sw, uint64_t now, const struct rsw_ars_sample *s)
{
	if (!sw)
		return;
	const struct rsw_ars_profile *p = &sw->prof;
	uint64_t grid = now - now % sw->sample_ns;
	if (!sw->samples++) {
		/* the first sample is the baseline: averages start at zero */
		for (unsigned i = 0; i < sw->n_ports; i++) {
			sw->port[i].last_tx = s[i].tx_bytes;
			sw->port[i].last_ns = grid;
		}
		sw->next_sample_ns = grid + sw->sample_ns;
		return;
	}
	for (unsigned i = 0; i < sw->n_ports; i++) {
		struct rsw_ars_port *pt = &sw->port[i];
		uint64_t sent = s[i].tx_bytes - pt->last_tx;
		/* intervals since this port's last sample: at least one */
		uint64_t k = pt->last_ns && grid > pt->last_ns ? (grid - pt->last_ns) / sw->sample_ns
							       : 1;
		if (!k)
			k = 1;
		uint64_t per = sent / k;
		for (uint64_t j = 0; j < (k < MAX_STEPS ? k : MAX_STEPS); j++) {
			pt->load_avg = rsw_ars_ewma(pt->load_avg, per, p->load_exp);
			pt->queue_avg = rsw_ars_ewma(pt->queue_avg, s[i].queue_bytes, p->queue_exp);
		}
		pt->last_tx = s[i].tx_bytes;
		pt->last_ns = grid;
		pt->load_band = (uint8_t)rsw_ars_band(pt->load_avg, p->load_min, p->load_max);
		pt->queue_band = (uint8_t)rsw_ars_band(pt->queue_avg, p->queue_min, p->queue_max);
		pt->band = (uint8_t)rsw_ars_combine(p, pt->load_band, pt->queue_band);
	}
}

static uint64_t next_rand(uint64_t *rng)
{
	uint64_t x = *rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Index into the group's active members: a random one, or (quality) the one of the lowest band,
 * ties broken by the group's seeded generator. why, when not NULL, gets each candidate's
 * quality, the lowest band and how many shared it. */
static unsigned pick(const struct rsw_ars_switch *sw, const struct rsw_ars_members *mb,
		     uint64_t *rng, int quality, struct rsw_ars_decision *why)
{
	if (why) {
		why->n_active = mb->n;
		for (unsigned k = 0; k < mb->n && k < RSW_ARS_DECISION_MEMBERS; k++) {
			uint16_t port = mb->port[k];
			const struct rsw_ars_port *pt = &sw->port[port];
			why->q[k] = (struct rsw_ars_quality){
				.load_avg = pt->load_avg, .queue_avg = pt->queue_avg,
				.slot = mb->slot[k], .port = port, .load_band = pt->load_band,
				.queue_band = pt->queue_band, .band = pt->band};
		}
	}
	if (!quality) {
		if (why)
			why->why = RSW_ARS_WHY_RANDOM;
		return (unsigned)((next_rand(rng) >> 32) % mb->n);
	}
	uint16_t tie[RSW_ECMP_MAX_MEMBERS];
	unsigned n = 0, best = RSW_ARS_BANDS;
	for (unsigned k = 0; k < mb->n; k++) {
		unsigned b = sw->port[mb->port[k]].band;
		if (b < best) {
			best = b;
			n = 0;
		}
		if (b == best)
			tie[n++] = (uint16_t)k;
	}
	if (why) {
		why->best_band = (uint8_t)best;
		why->n_tied = (uint16_t)n;
		why->why = n == 1 ? RSW_ARS_WHY_BEST : RSW_ARS_WHY_TIE;
	}
	return n == 1 ? tie[0] : tie[(next_rand(rng) >> 32) % n];
}

/* The index of slot among the group's active members, or -1 (the member is down or gone). */
static int active_index(const struct rsw_ars_members *mb, unsigned slot)
{
	for (unsigned k = 0; k < mb->n; k++)
		if (mb->slot[k] == slot)
			return (int)k;
	return -1;
}

uint32_t rsw_ars_member(const struct rsw_ars_switch *sw, struct rsw_ars_group *a,
			struct rsw_pkt_meta *m, uint32_t nh, uint64_t now,
			struct rsw_ars_decision *why, int dry)
{
	const struct rsw_ars_members *mb = &a->mb;
	const struct rsw_ars_profile *p = &sw->prof;
	unsigned mode = a->cfg.mode;
	if (why) {
		memset(why, 0, offsetof(struct rsw_ars_decision, q));
		why->recorded = 1;
		why->mode = (uint8_t)mode;
		why->now_ns = now;
		why->idle_ns = a->idle_ns;
		why->max_flows = a->cfg.max_flows;
		why->samples = sw->samples;
		why->chosen_slot = m->member;
	}
	if ((a->cfg.match_udp && (!(m->flags & RSW_META_F_UDP) || m->dport != a->cfg.match_dport)) ||
	    !(m->l3 == RSW_L3_IPV4 ? p->ipv4 : p->ipv6))
		return nh; /* not ARS traffic: the static choice */
	if (!dry)
		COUNT(a, packets);
	int per_packet = mode == RSW_ARS_PER_PACKET_QUALITY || mode == RSW_ARS_PER_PACKET_RANDOM;
	int quality = mode != RSW_ARS_FLOWLET_RANDOM && mode != RSW_ARS_PER_PACKET_RANDOM;
	uint16_t h = (uint16_t)m->hash;
	uint32_t index = rsw_fastmod(m->hash, a->flows_m, a->cfg.max_flows);
	struct rsw_flowlet *e = &a->flow[index];
	int own = e->valid && e->hash == h;
	int idle = !e->valid || (now > e->last_ns && now - e->last_ns > a->idle_ns);
	int prev = own ? active_index(mb, e->slot) : -1;
	if (why) {
		why->entry = index;
		why->entry_valid = e->valid;
		why->entry_own = (uint8_t)own;
		why->entry_hash = e->hash;
		why->held_slot = e->slot;
		why->last_ns = e->last_ns;
		why->held_down = own && prev < 0;
		why->new_flowlet = !per_packet && (idle || prev < 0);
	}
	if (!own && !idle && !per_packet) {
		if (!dry)
			COUNT(a, table_full); /* another active flow holds the entry */
		if (why)
			why->why = RSW_ARS_WHY_TABLE_FULL;
		return nh;
	}
	uint64_t rng = a->rng;
	unsigned k;
	if (!per_packet && prev >= 0 && (mode == RSW_ARS_FIXED || !idle)) {
		k = (unsigned)prev;
		if (why) {
			why->why = RSW_ARS_WHY_KEPT;
			why->new_flowlet = 0;
		}
	} else {
		k = pick(sw, mb, dry ? &rng : &a->rng, quality, why);
	}
	uint32_t to = mb->nh[k];
	uint16_t port = mb->port[k];
	if (why)
		why->chosen_slot = mb->slot[k];
	m->member = mb->slot[k];
	if (dry)
		return to;
	if (own && e->slot != mb->slot[k]) {
		COUNT(a, nexthop_reassignments);
		if (e->port != port)
			COUNT(a, port_reassignments);
	}
	if (own || idle) {
		e->hash = h;
		e->slot = mb->slot[k];
		e->port = port;
		e->valid = 1;
		e->last_ns = now;
	}
	return to;
}

void rsw_ars_count_drop(struct rsw_ars_group *a)
{
	COUNT(a, packet_drops);
}

struct rsw_ars_group *rsw_ars_group_new(const struct rsw_ars_obj *o,
					const struct rsw_ars_members *mb, uint64_t seed,
					uint32_t index)
{
	struct rsw_ars_group *a = calloc(1, sizeof(*a) + o->max_flows * sizeof(struct rsw_flowlet));
	if (!a)
		return NULL;
	a->cfg = *o;
	a->mb = *mb;
	a->idle_ns = (uint64_t)o->idle_us * 1000;
	a->flows_m = UINT64_MAX / o->max_flows + 1;
	/* one stream per group, from the profile's seed: reruns decide alike */
	a->rng = (seed + 1ull) * 0x9E3779B97F4A7C15ull + index;
	if (!a->rng)
		a->rng = 1;
	return a;
}

struct rsw_ars_switch *rsw_ars_switch_new(const struct rsw_ars_profile *p, uint16_t n_ports)
{
	struct rsw_ars_switch *sw = calloc(1, sizeof(*sw) + n_ports * sizeof(struct rsw_ars_port));
	if (!sw)
		return NULL;
	sw->prof = *p;
	sw->n_ports = n_ports;
	sw->sample_ns = (p->sample_us ? p->sample_us : 16) * 1000ull;
	return sw;
}

void rsw_ars_switch_carry(struct rsw_ars_switch *n, const struct rsw_ars_switch *o)
{
	unsigned np = n->n_ports < o->n_ports ? n->n_ports : o->n_ports;
	memcpy(n->port, o->port, np * sizeof(n->port[0]));
	n->samples = o->samples;
	n->next_sample_ns = o->next_sample_ns;
	for (unsigned p = np; p < n->n_ports; p++)
		n->port[p].last_ns = 0;
}

void rsw_ars_group_carry(struct rsw_ars_group *a, const struct rsw_ars_group *b)
{
	a->st = b->st;
	a->rng = b->rng;
	if (a->cfg.max_flows == b->cfg.max_flows)
		memcpy(a->flow, b->flow, a->cfg.max_flows * sizeof(a->flow[0]));
}
