/* Failures during a replay (--fail / --recover): at its time a link goes down (both its switch
 * ports administratively down, through the table-write API as the live `set port` does, so ECMP
 * groups drop the member through their resilient bucket tables and pinned routes fall back), or
 * a switch fails (every link it has). Frames put on a down link are lost; frames already on the
 * wire arrive. Recovery brings the ports up again. A controller's table writes (--te-reinstall-ns)
 * are committed on the same agenda, after the faults of the same time. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/tables/switch.h"
#include "dataplane/tables/table_write.h"
#include "replay_engine.h"
#include "replay_fault.h"
#include "replay_node.h"
#include "replay_switch.h"

/* A transaction committed on switch s at t; the switch then runs on the new tables. */
static int commit(struct replay *r, unsigned s, const struct rsw_txn *txn, uint64_t t)
{
	struct rsw_switch *sw = r->model->sw[s].sw;
	if (rsw_switch_commit(sw, txn, r->err, r->errlen) < 0) {
		r->failed = 1;
		return -1;
	}
	struct sw_node *n = &r->sw[s];
	if (rp_sw_tables(r, s, rsw_switch_fib(sw)) < 0) {
		snprintf(r->err, r->errlen, "out of memory");
		r->failed = 1;
		return -1;
	}
	rsw_switch_reap(sw);
	/* every port's queues and PFC decisions may read the new tables */
	for (unsigned q = 0; q < n->fib->n_ports; q++)
		rp_ports_add(&n->dirty_tx, q);
	rp_sw_settle(r, s, t);
	return 0;
}

/* Port p of switch s up or down, as one committed table write. */
static int set_port(struct replay *r, unsigned s, uint16_t p, int up, uint64_t t)
{
	struct rsw_switch *sw = r->model->sw[s].sw;
	struct rsw_table_write w = {.op = RSW_W_MODIFY, .table = RSW_T_PORT};
	w.u.port = sw->state->ports[p];
	w.u.port.admin_up = (uint8_t)up;
	snprintf(w.u.port.origin, sizeof(w.u.port.origin), "replay --%s at %llu ns",
		 up ? "recover" : "fail", (unsigned long long)t);
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_txn_add(txn, &w) < 0) {
		rsw_txn_free(txn);
		snprintf(r->err, r->errlen, "out of memory");
		r->failed = 1;
		return -1;
	}
	rp_ports_add(&r->sw[s].dirty_ctrl, p);
	int rc = commit(r, s, txn, t);
	rsw_txn_free(txn);
	return rc;
}

/* In a part of a zone (replay_part.h) the failure agenda's wake-up acts on several entities,
 * some held elsewhere: its event lines are numbered by the step that wrote them (an end of a
 * link, the link), steps every part counts alike, so that parts' lines merge in one run's order. */
static void fault_step(struct replay *r)
{
	if (r->part)
		r->log.lines = ++r->fault_steps << 16;
}

static void link_state(struct replay *r, unsigned li, int up, uint64_t t)
{
	const struct rsw_topo_link *lk = &r->model->link[li];
	const struct rsw_topo_end *end[2] = {&lk->a, &lk->b};
	r->link[2 * li].down = r->link[2 * li + 1].down = !up;
	for (unsigned e = 0; e < 2; e++) {
		fault_step(r);
		if (end[e]->sw != RSW_TOPO_HOST && rp_sw_here(r, (unsigned)end[e]->sw) &&
		    set_port(r, (unsigned)end[e]->sw, end[e]->idx, up, t))
			return;
	}
	fault_step(r);
	if (r->log.f && rp_end_here(r, &lk->a)) { /* one part writes the link's line */
		json_t *f = json_object();
		json_object_set_new(f, "link", json_integer(li));
		rp_event(r, t, up ? "link_up" : "link_down", NULL, NULL, NULL, f);
	}
	for (unsigned e = 0; e < 2; e++) /* a host whose link came back may send again */
		if (end[e]->sw == RSW_TOPO_HOST && rp_host_here(r, end[e]->idx))
			r->host_ops->wake(r, end[e]->idx, t);
}

/* The next time either agenda has something due, or UINT64_MAX. */
static uint64_t next_due(const struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	uint64_t t = UINT64_MAX;
	if (r->next_fault < md->n_fault)
		t = md->fault[r->next_fault].t;
	if (r->next_install < md->n_install && md->install[r->next_install].t < t)
		t = md->install[r->next_install].t;
	return t;
}

void rp_fault_start(struct replay *r)
{
	if (next_due(r) != UINT64_MAX)
		rp_schedule(r, r->id_fault, next_due(r));
}

static void install(struct replay *r, const struct rsw_replay_install *in, uint64_t t)
{
	fault_step(r);
	if (!rp_sw_here(r, in->sw))
		return;
	if (commit(r, in->sw, in->txn, t) < 0 || !r->log.f)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "what", json_string(in->what ? in->what : "table writes"));
	rp_event(r, t, "install", "switch", r->model->sw[in->sw].name, NULL, f);
}

void rp_fault_due(struct replay *r, uint64_t t)
{
	const struct rsw_replay_model *md = r->model;
	r->fault_steps = 0;
	while (r->next_fault < md->n_fault && md->fault[r->next_fault].t <= t && !r->failed) {
		const struct rsw_replay_fault *f = &md->fault[r->next_fault++];
		if (f->kind == RSW_FAULT_LINK) {
			link_state(r, f->idx, f->up, t);
			continue;
		}
		for (unsigned i = 0; i < md->n_link; i++)
			if (md->link[i].a.sw == (int)f->idx || md->link[i].b.sw == (int)f->idx)
				link_state(r, i, f->up, t);
	}
	while (r->next_install < md->n_install && md->install[r->next_install].t <= t &&
	       !r->failed)
		install(r, &md->install[r->next_install++], t);
	if (next_due(r) != UINT64_MAX && !r->failed)
		rp_schedule(r, r->id_fault, next_due(r));
}
