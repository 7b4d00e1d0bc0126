#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errlist.h"

void rsw_errlist_init(struct rsw_errlist *l)
{
	memset(l, 0, sizeof(*l));
}

void rsw_errlist_add(struct rsw_errlist *l, const char *msg)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **p = realloc(l->msgs, cap * sizeof(*p));
		if (!p) {
			l->dropped++;
			return;
		}
		l->msgs = p;
		l->cap = cap;
	}
	char *c = strdup(msg);
	if (!c) {
		l->dropped++;
		return;
	}
	l->msgs[l->n++] = c;
}

size_t rsw_errlist_count(const struct rsw_errlist *l)
{
	return l->n + l->dropped;
}

/* LINE of "FILE:LINE: ...", 0 for a message without one (sorted first) */
static unsigned long line_of(const char *m)
{
	const char *c = strstr(m, ": "), *d = c;
	if (!c)
		return 0;
	while (d > m && d[-1] >= '0' && d[-1] <= '9')
		d--;
	return d < c && d > m && d[-1] == ':' ? strtoul(d, NULL, 10) : 0;
}

struct ranked {
	unsigned long line;
	size_t i; /* found i-th: the order among errors of one line */
};

static int by_line(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int rsw_errlist_finish(struct rsw_errlist *l, char *err, size_t errlen)
{
	size_t total = rsw_errlist_count(l), used = 0;
	if (errlen)
		err[0] = 0;
	if (l->n) {
		struct ranked *k = malloc(l->n * sizeof(*k));
		if (k) {
			for (size_t i = 0; i < l->n; i++)
				k[i] = (struct ranked){line_of(l->msgs[i]), i};
			qsort(k, l->n, sizeof(*k), by_line);
		}
		for (size_t i = 0; i < l->n && i < RSW_ERRLIST_MAX_LISTED && used < errlen; i++) {
			int w = snprintf(err + used, errlen - used, "%s%s", i ? "\n" : "",
					 l->msgs[k ? k[i].i : i]);
			if (w > 0)
				used += (size_t)w;
		}
		free(k);
	}
	if (total > RSW_ERRLIST_MAX_LISTED && used < errlen)
		snprintf(err + used, errlen - used, "\n(%zu more errors)",
			 total - RSW_ERRLIST_MAX_LISTED);
	else if (!l->n && l->dropped && errlen)
		snprintf(err, errlen, "%u errors (out of memory listing them)", l->dropped);
	for (size_t i = 0; i < l->n; i++)
		free(l->msgs[i]);
	free(l->msgs);
	memset(l, 0, sizeof(*l));
	return total ? -1 : 0;
}
