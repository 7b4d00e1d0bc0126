#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dataplane/config/config.h"
#include "dataplane/tables/state_diff.h"
#include "fuzz_targets.h"

int rsw_fuzz_config(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/rocesw-fuzz-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	char err[2048];
	struct rsw_txn *t = rsw_txn_new();
	if (t && rsw_config_compile(path, t, err, sizeof(err)) == 0) {
		struct rsw_state *s = rsw_state_from_txn(t, err, sizeof(err));
		rsw_state_free(s);
	}
	rsw_txn_free(t);
	unlink(path);
	return 0;
}
