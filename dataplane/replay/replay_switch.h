/* A switch in replay (replay_switch.c): the ops the engine runs at its wake-ups, and what the
 * run and the failure agenda call. */
#ifndef RSW_REPLAY_SWITCH_H
#define RSW_REPLAY_SWITCH_H

#include <stdint.h>

#include <rte_mbuf.h>

struct replay;

/* The engine's switch ops (struct rp_node_ops). */
void rp_sw_rx(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m);
void rp_sw_input(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m,
		 uint32_t len);
/* A frame that reached port but found no packet memory: received, then dropped as no_mbuf. */
void rp_sw_lost(struct replay *r, unsigned s, uint16_t port, uint64_t t, uint32_t len);
void rp_sw_tx(struct replay *r, unsigned s, uint16_t port, uint64_t t);
void rp_sw_ctrl(struct replay *r, unsigned s, uint16_t port, uint64_t t);
/* Queue-depth samples at every period start from `from` to `to` (multiples of step). */
void rp_sw_sample(struct replay *r, uint64_t from, uint64_t to, uint64_t step);
/* Adds what s's ports counted (struct rp_sw_port) into its results, once the run is over. */
void rp_sw_fold(struct replay *r, unsigned s);
/* What a frame's arrival at s's port, or port's sending, will read, asked for ahead (struct
 * rp_node_ops) */
void rp_sw_rx_ahead(const struct replay *r, unsigned s, uint16_t port, unsigned stage);
void rp_sw_tx_ahead(const struct replay *r, unsigned s, uint16_t port, unsigned stage);

/* Switch s runs on tables fib: its TM reads their settings from the copy of the run's switches
 * that have the same (a zone's racks mostly do), one copy whichever switch reads it; when fib
 * brings settings no switch had, a copy of them. Returns -1 when that copy cannot be had. */
int rp_sw_tables(struct replay *r, unsigned s, const struct rsw_fib *fib);
/* Frees the copies of settings. */
void rp_sw_tables_free(struct replay *r);

/* After an event at switch s: PFC decisions and new wake-ups for the ports it touched. */
void rp_sw_settle(struct replay *r, unsigned s, uint64_t t);
/* The TM's log and flushed callbacks (arg: the replay): a watchdog line, and a packet its
 * watchdog flushed, dropped and logged as pfcwd_drop, by the switch of the rp_sw_settle running. */
void rp_sw_tm_log(void *arg, const char *line);
void rp_sw_flushed(void *arg, uint16_t port, struct rte_mbuf *m);

#endif
