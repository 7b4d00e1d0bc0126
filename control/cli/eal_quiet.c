#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "eal_quiet.h"

int rsw_eal_init_sized(const char *prog, unsigned long mb)
{
	static int done;
	char prefix[64], mem[32];
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocesw-tool-%ld", (long)getpid());
	snprintf(mem, sizeof(mem), "%lu", mb);
	char *argv[] = {
		(char *)prog, "-l", "0", "--no-huge", "-m", mem, "--no-pci", "--no-shconf", prefix,
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

int rsw_eal_init_quiet(const char *prog)
{
	return rsw_eal_init_sized(prog, 1024);
}
