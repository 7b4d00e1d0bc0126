/* `rocesw check-config F`: the same loader and errors as the dataplane and the daemon. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "eal_quiet.h"

int rsw_cmd_check_config(int argc, char **argv)
{
	char err[1024];

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: rocesw check-config F\n\n"
		       "Compiles switch config F into table writes and commits them to an offline\n"
		       "switch. Prints a summary and exits 0, or prints FILE:LINE: KEY: error and exits 1.\n");
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: rocesw check-config F\n");
		return 2;
	}
	if (rsw_eal_init_quiet("rocesw") < 0)
		return 1;
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	if (!sw || rsw_config_apply(sw, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		rsw_switch_free(sw);
		return 1;
	}
	const struct rsw_state *s = sw->state;
	printf("%s: ok: %u ports, %zu neighbours, %zu next-hop groups, %zu routes, %zu hash policies\n",
	       argv[1], s->n_ports, s->n_neigh, s->n_nhg, s->n_routes, s->n_pol);
	rsw_switch_free(sw);
	return 0;
}
