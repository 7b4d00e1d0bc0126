#ifndef RSW_STATE_DIFF_H
#define RSW_STATE_DIFF_H

#include <stddef.h>

#include "state.h"
#include "table_write.h"

/* Appends to txn the writes that turn cur into next (state_diff.c). Returns -1 with the reason
 * when ports differ (a restart is needed) or memory runs out. */
int rsw_state_diff(const struct rsw_state *cur, const struct rsw_state *next, struct rsw_txn *txn,
		   char *err, size_t errlen);

/* The state a transaction builds from the defaults: what a config file describes. Returns NULL
 * with the failing write's message. */
struct rsw_state *rsw_state_from_txn(const struct rsw_txn *txn, char *err, size_t errlen);

#endif
