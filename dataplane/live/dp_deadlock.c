/* `show deadlock` (rocesw show pfc --deadlock) on a live zone: the cycles of paused queues each
 * waiting on the next, read from the traffic managers' pause state, XOFF state and queues, found
 * by the cycle search replay's detector uses (dataplane/tm/pfc_wait.h), with how long each has
 * held and the PFC watchdog's settings, state and counters for its queues (docs/control.md). */
#include <stdlib.h>

#include "dataplane/tm/pfc_wait.h"
#include "dp_zone.h"

#define J(v) json_integer((json_int_t)(v))

/* The switch and port at the far end of switch s's port p, if it is a switch-switch link. */
static int peer_of(const struct rsw_zone *m, unsigned s, unsigned p, uint16_t *psw,
		   uint16_t *pport)
{
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_link *l = &m->link[i];
		if (l->a.sw == RSW_TOPO_HOST || l->b.sw == RSW_TOPO_HOST)
			continue;
		const struct rsw_topo_end *far = l->a.sw == (int)s && l->a.idx == p ? &l->b
						 : l->b.sw == (int)s && l->b.idx == p ? &l->a
										 : NULL;
		if (far) {
			*psw = (uint16_t)far->sw;
			*pport = far->idx;
			return 1;
		}
	}
	return 0;
}

/* The paused, non-empty queues of every switch whose peer has that priority's PG over XOFF. */
static int collect(const struct rsw_dp_zone *z, struct rsw_pfc_wait *g)
{
	if (rsw_pfc_wait_begin(g, z->n_sw) < 0)
		return -1;
	for (unsigned s = 0; s < z->n_sw; s++) {
		const struct rsw_dp *dp = z->dp[s];
		uint64_t now = rsw_clock_now(&dp->clock);
		for (uint16_t p = 0; p < dp->n_ports; p++) {
			uint16_t psw, pport;
			if (dp->ports[p].kind != RSW_DP_PORT_LINK || !peer_of(z->model, s, p, &psw, &pport))
				continue;
			const struct rsw_tm_port *tp = rsw_tm_port_read(dp->tm, p);
			const struct rsw_tm_port *pp = rsw_tm_port_read(z->dp[psw]->tm, pport);
			uint8_t paused = 0;
			for (unsigned q = 0; q < RSW_PFC_PRIOS; q++)
				if (now < __atomic_load_n(&tp->pause.until_ns[q], __ATOMIC_RELAXED))
					paused |= (uint8_t)(1u << q);
			paused &= __atomic_load_n(&pp->xoff_pgs, __ATOMIC_RELAXED);
			for (unsigned bits = paused; bits; bits &= bits - 1) {
				unsigned q = (unsigned)__builtin_ctz(bits);
				if (!rsw_tm_queue_bytes(dp->tm, p, q))
					continue;
				if (!rsw_pfc_wait_add(g, dp->tm, (uint16_t)s, p, (uint8_t)q, psw, pport))
					return -1;
			}
		}
	}
	return 0;
}

static int count_frame(void *arg, struct rte_mbuf *m)
{
	(void)arg;
	(void)m;
	return 0;
}

/* One member: its queue, its peer, how long it has been paused, what it holds, its watchdog. */
static json_t *member_json(const struct rsw_dp_zone *z, const struct rsw_pfc_wait_node *a,
			   uint64_t *held)
{
	const struct rsw_dp *dp = z->dp[a->sw];
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
	const struct rsw_tm_port *tp = rsw_tm_port_read(dp->tm, a->port);
	uint64_t now = rsw_clock_now(&dp->clock);
	uint64_t since = __atomic_load_n(&tp->pause.start_ns[a->prio], __ATOMIC_RELAXED);
	*held = now > since ? now - since : 0;
	const struct rsw_pfcwd_cfg *wc = &fib->tm.port[a->port].wd[a->prio];
	uint64_t wd[RSW_PFCWD_STATS];
	rsw_tm_pfcwd_stats(dp->tm, a->port, a->prio, wd);
	json_t *w = json_object();
	json_object_set_new(w, "enabled", json_boolean(wc->enabled));
	json_object_set_new(w, "action", json_string(wc->enabled
						     ? rsw_pfcwd_action_name(wc->action) : "off"));
	json_object_set_new(w, "detection_ms", J(wc->detection_ns / 1000000));
	json_object_set_new(w, "restoration_ms", J(wc->restoration_ns / 1000000));
	uint8_t storm = __atomic_load_n(&tp->cold->wd[a->prio].storm, __ATOMIC_RELAXED);
	json_object_set_new(w, "status",
			    json_string(!wc->enabled ? "off" : storm ? "stormed" : "operational"));
	for (unsigned i = 0; i < RSW_PFCWD_STATS; i++)
		json_object_set_new(w, rsw_pfcwd_stat_names[i], J(wd[i]));
	const struct rsw_fib *pfib = rsw_switch_fib(z->dp[a->peer_sw]->sw);
	return json_pack("{s:s, s:s, s:i, s:s, s:s, s:I, s:I, s:I, s:o}", "switch", dp->name,
			 "port", fib->ports[a->port].name, "priority", a->prio, "peer_switch",
			 z->dp[a->peer_sw]->name, "peer_port", pfib->ports[a->peer_port].name,
			 "paused_us", (json_int_t)(*held / 1000), "queued_frames",
			 (json_int_t)rsw_tm_queue_walk(dp->tm, a->port, a->prio, count_frame, NULL),
			 "queued_bytes", (json_int_t)rsw_tm_queue_bytes(dp->tm, a->port, a->prio),
			 "pfcwd", w);
}

struct cycles {
	const struct rsw_dp_zone *z;
	const struct rsw_pfc_wait *g;
	json_t *out;
};

/* A cycle holds since its last member's pause began: the shortest of the members' pauses (each
 * read on its own switch's clock). */
static int on_cycle(void *arg, const unsigned *cyc, unsigned len)
{
	struct cycles *c = arg;
	json_t *members = json_array();
	uint64_t held = UINT64_MAX;
	for (unsigned i = 0; i < len; i++) {
		uint64_t h;
		json_array_append_new(members, member_json(c->z, &c->g->node[cyc[i]], &h));
		held = h < held ? h : held;
	}
	json_array_append_new(c->out, json_pack("{s:I, s:o}", "held_us", (json_int_t)(held / 1000),
						"cycle", members));
	return 0;
}

json_t *rsw_dp_zone_deadlock_json(const struct rsw_dp_zone *z, char *err, size_t errlen)
{
	struct rsw_pfc_wait g = {0};
	json_t *dl = json_array();
	struct cycles c = {.z = z, .g = &g, .out = dl};
	if (z->model && (collect(z, &g) < 0 || rsw_pfc_wait_search(&g, on_cycle, &c) < 0)) {
		rsw_pfc_wait_free(&g);
		json_decref(dl);
		snprintf(err, errlen, "show deadlock: out of memory");
		return NULL;
	}
	json_t *r = json_pack("{s:s, s:I, s:o}", "zone", z->name ? z->name : "",
			      "paused_queues", (json_int_t)g.n, "deadlocks", dl);
	rsw_pfc_wait_free(&g);
	return r;
}
