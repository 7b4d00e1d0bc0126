/* Every error of a transaction at once: a write that fails is skipped and the next ones are
 * still tried, so that a user fixing a config sees all its dangling names in one go, in the
 * order of the file's lines (an error whose origin is FILE:LINE sorts by LINE). */
#ifndef RSW_ERRLIST_H
#define RSW_ERRLIST_H

#include <stddef.h>

#define RSW_ERRLIST_MAX_LISTED 50

struct rsw_errlist {
	char **msgs;
	size_t n, cap;
	unsigned dropped; /* out of memory: counted, not kept */
};

void rsw_errlist_init(struct rsw_errlist *l);
/* Adds msg (one error, without newline). */
void rsw_errlist_add(struct rsw_errlist *l, const char *msg);
size_t rsw_errlist_count(const struct rsw_errlist *l);
/* -1 if any error was added: err then holds them one per line, by line of origin, at most
 * RSW_ERRLIST_MAX_LISTED and "(N more errors)"; else 0. Frees the list either way. */
int rsw_errlist_finish(struct rsw_errlist *l, char *err, size_t errlen);

#endif
