#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "dp_priv.h"
#include "dp_zone.h"

int rsw_dp_user_lookup(const char *name, struct rsw_dp_user *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	char *end;
	unsigned long v = strtoul(name, &end, 10);
	struct passwd *pw = *name && !*end ? getpwuid((uid_t)v) : getpwnam(name);
	if (!pw) {
		snprintf(err, errlen, "--user %s: no such user", name);
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "--user %s: is uid 0, which would keep every privilege",
			 name);
		return -1;
	}
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->n_groups = (int)(sizeof(u->groups) / sizeof(u->groups[0]));
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &u->n_groups) < 0) {
		snprintf(err, errlen, "--user %s: member of more than %zu groups", name,
			 sizeof(u->groups) / sizeof(u->groups[0]));
		return -1;
	}
	return 0;
}

/* every capability rsw_dp_priv_needed may keep */
#define KEEP_AT_MOST (1ull << CAP_NET_ADMIN)

static int drop_bound(uint64_t keep)
{
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++)
		if (!(keep >> c & 1) && CAP_IS_SUPPORTED(c) && cap_drop_bound(c) < 0)
			return -1;
	return 0;
}

int rsw_dp_priv_early(char *err, size_t errlen)
{
	/* both limit only what an execve could gain (CAP_SETPCAP, which shrinks the bounding set
	 * again later, stays effective), and EAL's threads, made next, inherit them */
	if (drop_bound(KEEP_AT_MOST) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0) {
		snprintf(err, errlen, "--user: limiting privileges before the start: %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

uint64_t rsw_dp_priv_needed(const struct rsw_dp_zone *z, char *why, size_t whylen)
{
	uint64_t keep = 0;
	why[0] = 0;
	for (unsigned s = 0; s < z->n_sw; s++)
		for (unsigned p = 0; p < z->dp[s]->n_ports; p++) {
			const struct rsw_dp_port *port = &z->dp[s]->ports[p];
			struct rte_eth_dev_info info;
			if (port->kind != RSW_DP_PORT_ETH ||
			    rte_eth_dev_info_get(port->port_id, &info) != 0)
				continue;
			/* what start did to the kernel's interfaces and exit undoes: the XDP
			 * program af_xdp attached, the interface tap created */
			const char *drv = info.driver_name;
			if (strcmp(drv, "net_af_xdp") && strcmp(drv, "net_tap"))
				continue;
			if (!keep)
				snprintf(why, whylen, " (for %s, %s)",
					 port->devargs ? port->devargs : "", drv);
			keep |= 1ull << CAP_NET_ADMIN;
		}
	return keep;
}

void rsw_dp_priv_names(uint64_t keep, char *out, size_t len)
{
	size_t n = 0;
	out[0] = 0;
	for (cap_value_t c = 0; c < 64 && n < len; c++)
		if (keep >> c & 1) {
			char *name = cap_to_name(c);
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "",
					      name ? name : "?");
			cap_free(name);
		}
	if (!out[0])
		snprintf(out, len, "none");
}

int rsw_dp_priv_drop(const struct rsw_dp_user *u, uint64_t keep, char *err, size_t errlen)
{
	const char *step = "the bounding set";
	/* first the bounding set: shrinking it needs CAP_SETPCAP, dropped below */
	if (drop_bound(keep) < 0)
		goto fail;
	/* the permitted set survives the change of uid in this thread only (keepcaps is per
	 * thread): glibc's set*id run in every thread, and the others lose all capabilities */
	step = "keepcaps";
	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0)
		goto fail;
	step = "setgroups";
	if (setgroups((size_t)u->n_groups, u->groups) < 0)
		goto fail;
	step = "setresgid";
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		goto fail;
	step = "setresuid";
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		goto fail;
	step = "capset";
	cap_t caps = cap_init();
	if (!caps)
		goto fail;
	for (cap_value_t c = 0; c < 64; c++)
		if (keep >> c & 1) {
			cap_value_t one[1] = {c};
			cap_set_flag(caps, CAP_PERMITTED, 1, one, CAP_SET);
			cap_set_flag(caps, CAP_EFFECTIVE, 1, one, CAP_SET);
		}
	int rc = cap_set_proc(caps);
	cap_free(caps);
	if (rc < 0)
		goto fail;
	step = "no_new_privs";
	if (cap_reset_ambient() < 0 || prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		goto fail;
	/* the proof: root cannot be had back */
	if (setresuid(0, 0, 0) == 0 || geteuid() != u->uid || getegid() != u->gid) {
		snprintf(err, errlen, "--user %s: root could still be regained after the drop",
			 u->name);
		return -1;
	}
	return 0;
fail:
	snprintf(err, errlen, "--user %s: dropping privileges (%s): %s", u->name, step,
		 strerror(errno));
	return -1;
}
