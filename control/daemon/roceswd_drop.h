/* roceswd becomes ROCESWD.GLOBAL.user (docs/security.md "roceswd's privileges"): after its
 * launcher is forked and its metrics port bound, it needs no privilege at all. */
#ifndef RSW_ROCESWD_DROP_H
#define RSW_ROCESWD_DROP_H

#include <stddef.h>
#include <sys/types.h>

/* NAME (or a number) from the user database: uid, primary gid. Returns 0, or -1 with a
 * message (no such user, or root, which would keep every privilege). */
int rsw_daemon_user(const char *name, uid_t *uid, gid_t *gid, char *err, size_t errlen);

/* Becomes name for good: its groups, gid and uid in every thread, an empty bounding set and no
 * capability (a change of uid from 0 clears them), no_new_privs; root cannot be had back.
 * Returns 0, or -1 with a message (the caller must exit: it may be half-dropped). */
int rsw_daemon_drop(const char *name, char *err, size_t errlen);

#endif
