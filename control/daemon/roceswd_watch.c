/* The files roceswd reloads on change (one config, or a zone file and its switches' configs),
 * watched through their directories: editors replace files, so the name is what counts. A file
 * written in place is seen once its writer closes it (IN_CLOSE_WRITE), a replaced one once it is
 * renamed into place (IN_MOVED_TO): never half-written. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "roceswd_watch.h"

int rsw_watch_init(struct rsw_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return w->fd < 0 ? -1 : 0;
}

static void clear(struct rsw_watch *w)
{
	for (unsigned i = 0; i < w->n; i++) {
		/* a directory holding several files has one watch: removed once */
		int dup = 0;
		for (unsigned k = 0; k < i; k++)
			dup |= w->wd[k] == w->wd[i];
		if (!dup)
			inotify_rm_watch(w->fd, w->wd[i]);
		free(w->path[i]);
	}
	free(w->wd);
	free(w->path);
	w->wd = NULL;
	w->path = NULL;
	w->n = 0;
}

int rsw_watch_set(struct rsw_watch *w, char *const *paths, unsigned n)
{
	int same = n == w->n;
	for (unsigned i = 0; same && i < n; i++)
		same = !strcmp(paths[i], w->path[i]);
	if (same)
		return 0; /* no watch removed and added again: no change can slip between */
	clear(w);
	w->wd = calloc(n ? n : 1, sizeof(*w->wd));
	w->path = calloc(n ? n : 1, sizeof(*w->path));
	if (!w->wd || !w->path)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", paths[i]);
		w->path[i] = strdup(paths[i]);
		w->n = i + 1;
		if (!w->path[i])
			return -1;
		w->wd[i] = inotify_add_watch(w->fd, dirname(dir), IN_CLOSE_WRITE | IN_MOVED_TO);
		if (w->wd[i] < 0)
			return -1;
	}
	return 0;
}

int rsw_watch_changed(struct rsw_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;
	ssize_t n;
	while ((n = read(w->fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)(void *)p;
			for (unsigned i = 0; e->len && i < w->n; i++) {
				char b[PATH_MAX];
				snprintf(b, sizeof(b), "%s", w->path[i]);
				hit |= e->wd == w->wd[i] && !strcmp(e->name, basename(b));
			}
			p += sizeof(*e) + e->len;
		}
	return hit;
}

void rsw_watch_close(struct rsw_watch *w)
{
	clear(w);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
