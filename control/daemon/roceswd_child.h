/* roceswd's dataplane: started (by roceswd or its launcher), adopted, watched, restarted with
 * backoff when it dies, stopped (docs/roceswd.md). */
#ifndef RSW_ROCESWD_CHILD_H
#define RSW_ROCESWD_CHILD_H

#include "roceswd_state.h"

void rsw_child_start(struct roceswd *d);
int rsw_child_adopt(struct roceswd *d);
void rsw_child_died(struct roceswd *d, int status);
void rsw_child_reap(struct roceswd *d);
void rsw_child_tick(struct roceswd *d);
void rsw_child_stop(struct roceswd *d);
/* Forks the launcher with the dataplane's command line on the boot copy. Returns 0 or -1. */
int rsw_child_launcher(struct roceswd *d);
/* The launcher's channel is readable: a death of its dataplane, or the launcher gone. */
void rsw_child_launcher_event(struct roceswd *d);

#endif
