/* TE's routes in a replay: computed with rocesw te's CSPF for the links up at each moment,
 * committed before the run and scheduled after each failure or recovery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_te.h"
#include "te.h"
#include "te_write.h"
#include "dataplane/tables/switch.h"

void rsw_replay_te_free(struct rsw_replay_te *te)
{
	for (unsigned i = 0; i < te->n_install; i++) {
		rsw_txn_free((struct rsw_txn *)te->install[i].txn);
		free((char *)te->install[i].what);
	}
	free(te->install);
	memset(te, 0, sizeof(*te));
}

/* The installs taking every switch from `from` to `to` at t. */
static int schedule(struct rsw_replay_te *te, const struct rsw_zone *z,
		    const struct rsw_te_result *from, const struct rsw_te_result *to, uint64_t t,
		    const char *origin)
{
	for (unsigned s = 0; s < z->n_sw; s++) {
		struct rsw_txn *txn = rsw_txn_new();
		if (!txn || rsw_te_txn(from, to, s, origin, txn) < 0) {
			rsw_txn_free(txn);
			return -1;
		}
		if (!rsw_txn_len(txn)) {
			rsw_txn_free(txn);
			continue;
		}
		void *p = realloc(te->install, (te->n_install + 1) * sizeof(*te->install));
		char *what = strdup(origin);
		if (!p || !what) {
			free(what);
			rsw_txn_free(txn);
			return -1;
		}
		te->install = p;
		te->install[te->n_install++] = (struct rsw_replay_install){
			.t = t, .sw = s, .txn = txn, .what = what};
	}
	return 0;
}

static void mark(const struct rsw_zone *z, const struct rsw_replay_fault *f, uint8_t *down)
{
	for (unsigned i = 0; i < z->n_link; i++)
		if (f->kind == RSW_FAULT_LINK ? i == f->idx
					      : (z->link[i].a.sw == (int)f->idx ||
						 z->link[i].b.sw == (int)f->idx))
			down[i] = (uint8_t)!f->up;
}

int rsw_replay_te_prepare(struct rsw_zone *z, const struct rsw_coll *c,
			  const struct rsw_replay_fault *faults, unsigned n_fault,
			  long long reinstall_ns, struct rsw_replay_te *te, char *err,
			  size_t errlen)
{
	struct rsw_te_result prev, next;
	uint8_t *down = calloc(z->n_link ? z->n_link : 1, 1);
	memset(te, 0, sizeof(*te));
	if (!down || rsw_te_compute(z, c, NULL, &prev, err, errlen) < 0) {
		if (!down)
			snprintf(err, errlen, "out of memory");
		free(down);
		return -1;
	}
	te->n_routes = prev.n_route;
	te->n_over = prev.n_over;
	int rc = 0;
	/* before the run: each switch's routes committed as the config compiler's would be */
	for (unsigned s = 0; s < z->n_sw && rc == 0; s++) {
		struct rsw_txn *txn = rsw_txn_new();
		rc = txn && rsw_te_txn(NULL, &prev, s, "rocesw te", txn) == 0 ? 0 : -1;
		if (rc < 0)
			snprintf(err, errlen, "out of memory");
		else if (rsw_txn_len(txn) && rsw_switch_commit(z->sw[s].sw, txn, err, errlen) < 0)
			rc = -1;
		else
			rsw_switch_reap(z->sw[s].sw);
		rsw_txn_free(txn);
	}
	for (unsigned i = 0; rc == 0 && reinstall_ns >= 0 && i < n_fault; i++) {
		mark(z, &faults[i], down);
		/* faults at one time are seen together */
		if (i + 1 < n_fault && faults[i + 1].t == faults[i].t)
			continue;
		char origin[160];
		uint64_t t = faults[i].t + (uint64_t)reinstall_ns;
		snprintf(origin, sizeof(origin), "rocesw te at %llu ns (links down at %llu ns)",
			 (unsigned long long)t, (unsigned long long)faults[i].t);
		rc = rsw_te_compute(z, c, down, &next, err, errlen);
		if (rc == 0) {
			rc = schedule(te, z, &prev, &next, t, origin);
			if (rc < 0)
				snprintf(err, errlen, "out of memory");
			rsw_te_free(&prev);
			prev = next;
		}
	}
	rsw_te_free(&prev);
	free(down);
	if (rc < 0)
		rsw_replay_te_free(te);
	return rc;
}
