#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "eal_quiet.h"

int rsw_eal_init_quiet(const char *prog)
{
	static int done;
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocesw-tool-%ld", (long)getpid());
	char *argv[] = {
		(char *)prog, "-l", "0", "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", prefix,
		"--no-telemetry", "--log-level=error", NULL,
	};
	if (done)
		return 0;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "%s: cannot initialise DPDK EAL: %s\n", prog, rte_strerror(rte_errno));
		return -1;
	}
	done = 1;
	return 0;
}
