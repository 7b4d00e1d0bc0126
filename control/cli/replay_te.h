/* `rocesw replay --te [--te-reinstall-ns NS]`: TE's routes for the run's collective installed
 * before it starts, and re-computed and re-installed NS after each --fail/--recover, as a
 * controller that sees the failure would (docs/te.md, "In replay"). */
#ifndef RSW_REPLAY_TE_H
#define RSW_REPLAY_TE_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/config/zone.h"
#include "dataplane/replay/replay.h"

#define RSW_REPLAY_TE_USAGE \
	"  --te             zone with --collective: install the policy routes rocesw te\n" \
	"                   computes for the collective before the run (docs/te.md)\n" \
	"  --te-reinstall-ns NS  with --te: NS after each --fail/--recover, the routes TE\n" \
	"                   computes for the links then down replace the installed ones\n" \
	"                   (until then pinned routes on a down port fall back to ECMP)\n"

struct rsw_replay_te {
	struct rsw_replay_install *install;
	unsigned n_install;
	unsigned n_routes;          /* installed before the run */
	unsigned n_over;            /* of the first computation: flows over capacity */
};

/* Commits TE's routes on z's switches and, with reinstall_ns >= 0, builds the installs after
 * each fault (faults in time order). Returns 0, or -1 with the reason in err. */
int rsw_replay_te_prepare(struct rsw_zone *z, const struct rsw_coll *c,
			  const struct rsw_replay_fault *faults, unsigned n_fault,
			  long long reinstall_ns, struct rsw_replay_te *te, char *err,
			  size_t errlen);
void rsw_replay_te_free(struct rsw_replay_te *te);

#endif
