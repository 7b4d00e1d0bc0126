#include <stdio.h>
#include <stdlib.h>

#include <rte_rcu_qsbr.h>

#include "ars.h"
#include "switch.h"

struct rsw_switch *rsw_switch_new(struct rte_rcu_qsbr *qsbr, char *err, size_t errlen)
{
	struct rsw_switch *sw = calloc(1, sizeof(*sw));
	if (!sw) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&sw->lock, NULL);
	sw->qsbr = qsbr;
	sw->state = rsw_state_new();
	if (!sw->state) {
		snprintf(err, errlen, "out of memory");
		free(sw);
		return NULL;
	}
	sw->fib = rsw_fib_build(sw->state, 0, err, (unsigned)errlen);
	if (!sw->fib) {
		rsw_switch_free(sw);
		return NULL;
	}
	return sw;
}

void rsw_switch_reap(struct rsw_switch *sw)
{
	pthread_mutex_lock(&sw->lock);
	rsw_fib_free(sw->retired);
	sw->retired = NULL;
	pthread_mutex_unlock(&sw->lock);
}

void rsw_switch_free(struct rsw_switch *sw)
{
	if (!sw)
		return;
	rsw_fib_free(sw->retired);
	rsw_fib_free(sw->fib);
	rsw_state_free(sw->state);
	pthread_mutex_destroy(&sw->lock);
	free(sw);
}

int rsw_switch_prepare(struct rsw_switch *sw, const struct rsw_txn *txn,
		       struct rsw_switch_prep *prep, char *err, size_t errlen)
{
	*prep = (struct rsw_switch_prep){0};
	pthread_mutex_lock(&sw->lock);
	struct rsw_state *next = rsw_state_clone(sw->state);
	if (!next) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (rsw_state_apply_all(next, txn, err, errlen) < 0)
		goto fail;
	prep->fib = rsw_fib_build(next, sw->generation + 1, err, (unsigned)errlen);
	if (!prep->fib)
		goto fail;
	prep->state = next;
	return 0; /* the lock stays held until rsw_switch_release or rsw_switch_abort */
fail:
	rsw_state_free(next);
	sw->rejects++;
	pthread_mutex_unlock(&sw->lock);
	return -1;
}

void rsw_switch_abort(struct rsw_switch *sw, struct rsw_switch_prep *prep)
{
	rsw_fib_free(prep->fib);
	rsw_state_free(prep->state);
	*prep = (struct rsw_switch_prep){0};
	sw->rejects++;
	pthread_mutex_unlock(&sw->lock);
}

void rsw_switch_publish(struct rsw_switch *sw, struct rsw_switch_prep *prep)
{
	rsw_fib_carry(prep->fib, sw->fib); /* flowlets and averages live on */
	prep->old = __atomic_exchange_n(&sw->fib, prep->fib, __ATOMIC_ACQ_REL);
	prep->fib = NULL;
	rsw_state_free(sw->state);
	sw->state = prep->state;
	prep->state = NULL;
	sw->generation++;
	sw->commits++;
}

void rsw_switch_release(struct rsw_switch *sw, struct rsw_switch_prep *prep)
{
	rsw_fib_free(sw->retired);
	sw->retired = prep->old;
	prep->old = NULL;
	pthread_mutex_unlock(&sw->lock);
}

void rsw_switch_wait_readers(struct rte_rcu_qsbr *qsbr)
{
	/* rte_rcu_qsbr_synchronize's two steps, inline from DPDK's header rather than in its
	 * compiled library: ThreadSanitizer then sees each worker's quiescent report acquired */
	rte_rcu_qsbr_check(qsbr, rte_rcu_qsbr_start(qsbr), true);
}

int rsw_switch_commit(struct rsw_switch *sw, const struct rsw_txn *txn, char *err, size_t errlen)
{
	struct rsw_switch_prep prep;
	if (rsw_switch_prepare(sw, txn, &prep, err, errlen) < 0)
		return -1;
	rsw_switch_publish(sw, &prep);
	/* workers report a quiescent state between bursts; after that none holds the old tables */
	if (sw->qsbr)
		rsw_switch_wait_readers(sw->qsbr);
	rsw_switch_release(sw, &prep);
	return 0;
}
