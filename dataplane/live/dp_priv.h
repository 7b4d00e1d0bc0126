/* Least privilege (--user NAME, docs/security.md "Privileges"): the dataplane starts as root,
 * opens its ports, memory and sockets, then becomes NAME for the rest of its life, keeping in its
 * main thread only the capabilities its ports need to undo at exit what they did at start, and
 * none in any other thread. */
#ifndef RSW_DP_PRIV_H
#define RSW_DP_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rsw_dp_zone;

struct rsw_dp_user {
	char name[64];
	uid_t uid;
	gid_t gid;                  /* the user's primary group */
	gid_t groups[64];           /* and its supplementary groups (/etc/group) */
	int n_groups;
};

/* Looks NAME (or a number) up in the user database. Returns 0, or -1 with a message. */
int rsw_dp_user_lookup(const char *name, struct rsw_dp_user *u, char *err, size_t errlen);

/* Before EAL starts its threads (they inherit it): no_new_privs, and a bounding set of nothing
 * but what rsw_dp_priv_needed may ask for; every capability stays permitted and effective for
 * the start. Returns 0, or -1 with a message. */
int rsw_dp_priv_early(char *err, size_t errlen);

/* Bit CAP_x set for each capability the zone's ports need after start: CAP_NET_ADMIN for an
 * af_xdp port (its XDP program is detached from the interface at exit) or a tap port (its
 * interface is deleted at exit). why names the first port that needs it. */
uint64_t rsw_dp_priv_needed(const struct rsw_dp_zone *z, char *why, size_t whylen);

/* Becomes u for every thread of the process (groups, gid, uid: glibc applies set*id to all
 * threads), keeping `keep` (bits CAP_x) permitted and effective in the calling thread only; the
 * other threads lose every capability. The bounding set keeps nothing else and no_new_privs is
 * set. Returns 0, or -1 with a message (the process must then exit: it may be half-dropped). */
int rsw_dp_priv_drop(const struct rsw_dp_user *u, uint64_t keep, char *err, size_t errlen);

/* "cap_net_admin" or "none": keep, for messages. */
void rsw_dp_priv_names(uint64_t keep, char *out, size_t len);

#endif
