/* `rocesw replay --ranks N [--sync window|null-messages] [--hostfile F] ...`: the same replay
 * partitioned over N MPI ranks: runs `mpirun -np N [--hostfile F] rocesw-replay-mpi ...` (the
 * binary next to this one, built with meson -Dns3_mpi) with the other arguments unchanged. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_ranks.h"

/* The value of option name at argv[*i] ("--name V" or "--name=V"), or NULL. */
static const char *value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

int rsw_replay_ranks(int argc, char **argv, int in_mpi)
{
	const char *ranks = NULL, *sync = NULL, *hostfile = NULL;
	char **rest = calloc((size_t)argc + 16, sizeof(*rest));
	int n = 0;
	if (!rest)
		return -1;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (!strcmp(argv[i], "--")) /* the rest is for replay */
			break;
		if ((v = value(argc, argv, &i, "--ranks")))
			ranks = v;
		else if ((v = value(argc, argv, &i, "--sync")))
			sync = v;
		else if ((v = value(argc, argv, &i, "--hostfile")))
			hostfile = v;
	}
	if (!ranks && !sync && !hostfile) {
		free(rest);
		return -1;
	}
	if (in_mpi) {
		fprintf(stderr, "rocesw-replay-mpi: --ranks and --hostfile are mpirun's (-np, "
			"--hostfile); --sync comes first\n");
		free(rest);
		return 2;
	}
	char *end;
	long np = ranks ? strtol(ranks, &end, 10) : 0;
	if (!ranks || *end || np < 1 || np > 65536) {
		fprintf(stderr, "rocesw replay: --ranks expects a number of MPI ranks (1-65536)%s\n",
			ranks ? "" : "; --sync and --hostfile go with it");
		free(rest);
		return 2;
	}
	char self[PATH_MAX], mpi[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(mpi, sizeof(mpi), "%s/rocesw-replay-mpi", slash ? self : ".");
	if (access(mpi, X_OK) != 0) {
		fprintf(stderr, "rocesw replay: --ranks needs %s: build with meson -Dns3_mpi=enabled "
			"after scripts/setup-ns3-mpi.sh (docs/replay-parallel.md)\n", mpi);
		free(rest);
		return 2;
	}
	rest[n++] = "mpirun";
	rest[n++] = "-np";
	rest[n++] = (char *)ranks;
	if (hostfile) {
		rest[n++] = "--hostfile";
		rest[n++] = (char *)hostfile;
	}
	rest[n++] = mpi;
	if (sync) {
		rest[n++] = "--sync";
		rest[n++] = (char *)sync;
	}
	for (int i = 1; i < argc; i++) {
		int j = i;
		if (value(argc, argv, &j, "--ranks") || value(argc, argv, &j, "--sync") ||
		    value(argc, argv, &j, "--hostfile")) {
			i = j;
			continue;
		}
		rest[n++] = argv[i];
	}
	rest[n] = NULL;
	fflush(NULL);
	execvp("mpirun", rest);
	fprintf(stderr, "rocesw replay: --ranks: cannot run mpirun: %s (apt-get install "
		"openmpi-bin, or scripts/setup-ns3-mpi.sh)\n", strerror(errno));
	free(rest);
	return 1;
}
