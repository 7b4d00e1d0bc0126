/* roceswd's reloads: one in flight at a time, its answer read from the daemon's loop; a reload
 * asked for meanwhile is queued (docs/roceswd.md). */
#ifndef RSW_ROCESWD_RELOAD_H
#define RSW_ROCESWD_RELOAD_H

#include "roceswd_state.h"

/* Reload now, or once the dataplane answers and the reload in flight is answered. */
void rsw_reload_request(struct roceswd *d, const char *why);
/* The dataplane's answer to the reload in flight (d->reload_fd readable): applied at a
 * generation (the snapshot becomes the running copy), or refused with its reason. */
void rsw_reload_finish(struct roceswd *d);
/* The reload in flight will get no answer (the dataplane died, roceswd stops): said, undone. */
void rsw_reload_abort(struct roceswd *d, const char *why);
/* The dataplane answers: started from the running copy, or adopted (programmed with the user's
 * config now); tells the service manager. */
void rsw_dataplane_ready(struct roceswd *d);
/* Every file of the zone is watched: the zone file and each switch's config. */
void rsw_watch_zone(struct roceswd *d, const struct rsw_zsnap *s);

#endif
