/* One switch's tables: the shadow state (control plane) and the published compiled tables
 * (dataplane), swapped atomically with RCU (rte_rcu_qsbr) on each committed transaction. */
#ifndef RSW_SWITCH_H
#define RSW_SWITCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fib.h"
#include "state.h"
#include "table_write.h"

struct rte_rcu_qsbr;

struct rsw_switch {
	struct rsw_state *state;
	struct rsw_fib *fib;          /* read by workers with rsw_switch_fib() */
	struct rte_rcu_qsbr *qsbr;    /* NULL when only one thread reads (replay, inspect) */
	pthread_mutex_t lock;         /* serializes writers */
	uint64_t generation;
	uint64_t commits, rejects;
	/* Tables replaced by the last commit, that no worker can see any more, not freed yet:
	 * freeing DPDK tables zeroes them (64 MiB per DIR-24-8 table), which the caller may rather
	 * do after answering (rsw_switch_reap). */
	struct rsw_fib *retired;
};

/* A switch with the default (empty) tables. qsbr may be NULL. */
struct rsw_switch *rsw_switch_new(struct rte_rcu_qsbr *qsbr, char *err, size_t errlen);
void rsw_switch_free(struct rsw_switch *sw);

/* Apply a transaction atomically: all writes or none. Returns 0, or -1 with a message naming the
 * failing write; on failure the switch is unchanged. Blocks until no worker can still see the
 * tables it replaced. */
int rsw_switch_commit(struct rsw_switch *sw, const struct rsw_txn *txn, char *err, size_t errlen);

/* rsw_switch_commit in steps, so that several switches (a zone) change together: prepare
 * builds the new tables (all the checks; on failure -1 with the message and nothing changed) and
 * keeps the switch's lock; publish swaps them in (cannot fail); once no worker can see the old
 * tables (rsw_switch_wait_readers on the switches' RCU state), release retires them and lets
 * the lock go. abort drops a prepared transaction instead of publishing it. */
struct rsw_switch_prep {
	struct rsw_state *state;
	struct rsw_fib *fib, *old;
};
int rsw_switch_prepare(struct rsw_switch *sw, const struct rsw_txn *txn,
		       struct rsw_switch_prep *prep, char *err, size_t errlen);
void rsw_switch_abort(struct rsw_switch *sw, struct rsw_switch_prep *prep);
void rsw_switch_publish(struct rsw_switch *sw, struct rsw_switch_prep *prep);
void rsw_switch_release(struct rsw_switch *sw, struct rsw_switch_prep *prep);

/* Returns once every worker registered on qsbr passed a quiescent state after the call: none of
 * them can still see tables unpublished before it (rte_rcu_qsbr_synchronize). */
void rsw_switch_wait_readers(struct rte_rcu_qsbr *qsbr);

/* Frees the tables the last commit replaced, if any. */
void rsw_switch_reap(struct rsw_switch *sw);

static inline const struct rsw_fib *rsw_switch_fib(const struct rsw_switch *sw)
{
	return __atomic_load_n(&sw->fib, __ATOMIC_ACQUIRE);
}

#endif
