/* A host playing its capture: what its application posted, at the captured times. By default
 * the NIC honours PFC: a frame of a paused priority waits (frames of other priorities pass it),
 * and the host's capture records when each frame really left. With hosts ignoring PFC every
 * frame leaves at its captured time. */
#include <stdlib.h>
#include <string.h>

#include "replay_engine.h"
#include "replay_host.h"
#include "replay_node.h"
#include "replay_player.h"

/* The blocks of the capture before the oldest frame still pending go back (read in place). */
static void keep_pending(struct host_node *hn)
{
	if (!hn->in.stable)
		return;
	const struct pending *oldest = NULL;
	for (unsigned prio = 0; prio <= HOST_CTRL_PRIO; prio++)
		if (hn->head[prio] && (!oldest || hn->head[prio]->order < oldest->order))
			oldest = hn->head[prio];
	rp_cap_keep(&hn->in, oldest ? oldest->data : NULL);
}

/* Frames captured at or before t join their priority's queue. */
static void pull(struct replay *r, struct host_node *hn, uint64_t t)
{
	while (hn->has_in && !hn->in.eof && hn->in.t <= t) {
		size_t own = hn->in.stable ? 0 : hn->in.len;
		struct pending *p = hn->spare;
		if (!own && p)
			hn->spare = p->next;
		else
			p = malloc(sizeof(*p) + own);
		if (!p) {
			r->oom = 1;
			return;
		}
		p->next = NULL;
		p->t_cap = hn->in.t;
		p->order = hn->n_read++;
		p->len = hn->in.len;
		p->data = own ? memcpy(p->copy, hn->in.data, own) : hn->in.data;
		p->at = own ? UINT64_MAX : hn->in.at;
		unsigned prio = rp_host_classify(r, hn, p->data, p->len, &p->flow, &p->head);
		if (hn->tail[prio])
			hn->tail[prio]->next = p;
		else
			hn->head[prio] = p;
		hn->tail[prio] = p;
		hn->n_pending++;
		rp_cap_next(r, &hn->in);
	}
	keep_pending(hn);
}

static void wake_ignoring_pfc(struct replay *r, unsigned h, uint64_t t)
{
	struct host_node *hn = &r->host[h];
	while (!hn->in.eof && hn->in.t <= t) {
		uint32_t flow, head;
		rp_host_classify(r, hn, hn->in.data, hn->in.len, &flow, &head);
		rp_host_send_frame(r, hn, t, hn->in.data, rp_cap_mapped(&hn->in, hn->in.at),
				   hn->in.len, head, flow, 0, 0);
		rp_cap_next(r, &hn->in);
	}
	rp_cap_keep(&hn->in, NULL);
	if (!hn->in.eof)
		rp_schedule(r, r->id_host + h, hn->in.t);
}

/* The oldest frame pending among the priorities not paused leaves at t. */
static void send_oldest(struct replay *r, unsigned h, struct host_node *hn, int best, uint64_t t)
{
	struct pending *p = hn->head[best];
	hn->head[best] = p->next;
	if (!p->next)
		hn->tail[best] = NULL;
	hn->n_pending--;
	if (t > p->t_cap) {
		uint64_t d = t - p->t_cap;
		hn->res->delayed_packets++;
		hn->res->total_delay_ns += d;
		if (d > hn->res->max_delay_ns)
			hn->res->max_delay_ns = d;
	}
	rsw_shaper_send(&hn->shaper, t, p->len);
	rp_host_send_frame(r, hn, t, p->data, rp_cap_mapped(&hn->in, p->at), p->len, p->head,
			   p->flow, 0, 0);
	if (p->data == p->copy) {
		free(p);
	} else {
		p->next = hn->spare;
		hn->spare = p;
	}
	rp_schedule(r, r->id_host + h, rsw_shaper_free_ns(&hn->shaper));
}

static void player_wake(struct replay *r, unsigned h, uint64_t t)
{
	struct host_node *hn = &r->host[h];
	if (r->model->hosts_ignore_pfc) {
		wake_ignoring_pfc(r, h, t);
		return;
	}
	pull(r, hn, t);
	uint64_t free_ns = rsw_shaper_free_ns(&hn->shaper);
	if (free_ns > t) {
		rp_schedule(r, r->id_host + h, free_ns);
		return;
	}
	/* the oldest frame among the priorities not paused */
	uint8_t paused = rsw_pause_mask(&hn->pause, t);
	int best = -1;
	for (unsigned prio = 0; prio <= HOST_CTRL_PRIO; prio++) {
		const struct pending *p = hn->head[prio];
		if (!p || (prio < 8 && (paused & (1u << prio))))
			continue;
		if (best < 0 || p->order < hn->head[best]->order)
			best = (int)prio;
	}
	if (best >= 0) {
		send_oldest(r, h, hn, best, t);
		return;
	}
	/* nothing may go now: wake when a pause ends or the next frame is captured */
	uint64_t next = hn->has_in && !hn->in.eof ? hn->in.t : NEVER;
	for (unsigned prio = 0; prio < 8; prio++)
		if (hn->head[prio] && hn->pause.until_ns[prio] < next)
			next = hn->pause.until_ns[prio];
	if (next == NEVER)
		rsw_event_cancel(&r->q, r->id_host + h);
	else
		rp_schedule(r, r->id_host + h, next);
}

const struct rp_host_ops rp_player_ops = {.wake = player_wake, .rx = NULL};
