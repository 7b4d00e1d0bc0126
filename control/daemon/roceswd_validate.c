/* The check roceswd makes of a config before the dataplane sees it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/config/config.h"
#include "dataplane/tables/state_diff.h"
#include "roceswd_validate.h"

/* The config compiled and built into tables: refuses what the dataplane would refuse. */
int rsw_validate(const char *path, const char *name, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	struct rsw_txn *txn = rsw_txn_new();
	struct rsw_state *s = NULL;
	int ok = txn && rsw_config_compile_fd(fd, name, txn, err, errlen) == 0 &&
		 (s = rsw_state_from_txn(txn, err, errlen)) != NULL;
	if (!txn)
		snprintf(err, errlen, "out of memory");
	rsw_state_free(s);
	rsw_txn_free(txn);
	close(fd);
	return ok ? 0 : -1;
}
