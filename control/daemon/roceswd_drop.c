#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "roceswd_drop.h"

int rsw_daemon_user(const char *name, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	char *end;
	unsigned long v = strtoul(name, &end, 10);
	struct passwd *pw = *name && !*end ? getpwuid((uid_t)v) : getpwnam(name);
	if (!pw) {
		snprintf(err, errlen, "ROCESWD user %s: no such user", name);
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "ROCESWD user %s: is uid 0, which would keep every privilege",
			 name);
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int rsw_daemon_drop(const char *name, char *err, size_t errlen)
{
	uid_t uid;
	gid_t gid;
	if (rsw_daemon_user(name, &uid, &gid, err, errlen) < 0)
		return -1;
	struct passwd *pw = getpwuid(uid);
	const char *step = "the bounding set";
	/* every capability out of the bounding set while CAP_SETPCAP still lets it: nothing can
	 * be regained by an exec (roceswd executes nothing after this) */
	for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			goto fail;
	step = "initgroups";
	if (initgroups(pw ? pw->pw_name : name, gid) < 0)
		goto fail;
	step = "setresgid";
	if (setresgid(gid, gid, gid) < 0)
		goto fail;
	/* glibc applies set*id to every thread (libmicrohttpd's too); leaving uid 0 without
	 * keepcaps clears the permitted, effective and ambient sets */
	step = "setresuid";
	if (setresuid(uid, uid, uid) < 0)
		goto fail;
	step = "no_new_privs";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0)
		goto fail;
	if (setresuid(0, 0, 0) == 0 || geteuid() != uid || getegid() != gid) {
		snprintf(err, errlen, "ROCESWD user %s: root could still be regained after the drop",
			 name);
		return -1;
	}
	return 0;
fail:
	snprintf(err, errlen, "ROCESWD user %s: dropping privileges (%s): %s", name, step,
		 strerror(errno));
	return -1;
}
