/* The files roceswd reloads when they change, watched with inotify on their directories. */
#ifndef RSW_ROCESWD_WATCH_H
#define RSW_ROCESWD_WATCH_H

struct rsw_watch {
	int fd;        /* inotify: poll it, then rsw_watch_changed */
	unsigned n;
	int *wd;       /* per path: the watch of its directory */
	char **path;
};

int rsw_watch_init(struct rsw_watch *w);
/* Watches these paths (absolute) instead of the previous ones; the same list changes nothing.
 * Returns -1 with errno. */
int rsw_watch_set(struct rsw_watch *w, char *const *paths, unsigned n);
/* Reads the pending events: 1 if one of the watched files was written or replaced. */
int rsw_watch_changed(struct rsw_watch *w);
void rsw_watch_close(struct rsw_watch *w);

#endif
