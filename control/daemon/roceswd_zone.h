/* roceswd --zone: snapshots of a zone (the zone file and every switch's config, copied together
 * into one directory so that what is applied is what was read), their checks, and the zone-wide
 * reload request (docs/roceswd.md, "A zone"). */
#ifndef RSW_ROCESWD_ZONE_H
#define RSW_ROCESWD_ZONE_H

#include <stddef.h>

#include <jansson.h>

struct rsw_zsnap {
	unsigned n;
	char **name;   /* the switches, in the zone file's order */
	char **src;    /* each one's config as the zone file names it (resolved) */
	char **copy;   /* DIR/NAME.yaml */
	json_t *topo;  /* what a reload may not change: ZONE name, switch names, HOST, LINK */
};

/* Copies zone (and every config its SWITCH table names) into dir, emptied first: dir/zone.yaml
 * names dir/NAME.yaml for switch NAME. Returns 0, or -1 with a message. */
int rsw_zsnap_take(const char *zone, const char *dir, struct rsw_zsnap *s, char *err,
		   size_t errlen);
/* Reads a zone file's switches and topology without copying anything. */
int rsw_zsnap_read(const char *zone, struct rsw_zsnap *s, char *err, size_t errlen);
void rsw_zsnap_free(struct rsw_zsnap *s);
/* 0 if b keeps a's topology, else -1 with what changed. */
int rsw_zsnap_same_topology(const struct rsw_zsnap *a, const struct rsw_zsnap *b, char *err,
			    size_t errlen);
/* Every switch config of s checked as the dataplane would (rsw_validate): each error of each
 * refused switch logged on its own line. Returns the number of refused switches. */
unsigned rsw_zsnap_validate(const struct rsw_zsnap *s, const char *what);
/* Sends the zone's `reload`: every switch config of s passed open, named by switch. Returns the
 * socket awaiting the answer, or -1 with err. */
int rsw_zsnap_send_reload(const struct rsw_zsnap *s, const char *socket, char *err,
			  size_t errlen);
/* Makes dir `next` the running one (exchanged, the old one emptied). Returns 0 or -1 (errno). */
int rsw_zsnap_promote(const char *next, const char *running);
/* Empties and removes a snapshot directory. */
void rsw_zsnap_remove(const char *dir);

#endif
