/* `rocesw check-config F`: the same loader and errors as the dataplane and the daemon; a zone
 * config is loaded as replay loads it, every switch config compiled. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "dataplane/config/config.h"
#include "dataplane/config/config_schema.h"
#include "eal_quiet.h"
#include "dataplane/config/zone.h"

static void summary(const char *what, const struct rsw_switch *sw)
{
	const struct rsw_state *s = sw->state;
	printf("%s: ok: %u ports, %zu neighbours, %zu next-hop groups, %zu routes, %zu hash policies\n",
	       what, s->n_ports, s->n_neigh, s->n_nhg, s->n_routes, s->n_pol);
}

static int check_zone(const char *path)
{
	static struct rsw_zone z;
	char err[2048];
	struct rsw_zone_opts o = {.ecn_seed = 1, .warnings = stderr};
	if (rsw_zone_load(path, &o, &z, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%s: ok: zone %s: %u switches, %u hosts, %u links\n", path, z.name, z.n_sw, z.n_host,
	       z.n_link);
	for (unsigned s = 0; s < z.n_sw; s++) {
		char what[4096];
		snprintf(what, sizeof(what), "  %s (%s)", z.sw[s].name, z.sw_config[s]);
		summary(what, z.sw[s].sw);
	}
	rsw_fib_process_exiting();
	rsw_zone_free(&z);
	return 0;
}

int rsw_cmd_check_config(int argc, char **argv)
{
	static char err[65536]; /* every error of a file, one a line */
	struct rsw_config_opts o = {.sonic = -1, .warnings = stderr};
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: rocesw check-config [--sonic] F\n"
			       "       rocesw check-config --schema-markdown\n\n"
			       "Compiles switch config F into table writes and commits them to an offline\n"
			       "switch; for a zone config (docs/replay.md), checks its tables and links and\n"
			       "compiles every switch's config. Prints a summary and exits 0, or prints\n"
			       "every error, FILE:LINE: TABLE|KEY: field: what was expected, and exits 1.\n\n"
			       "  --sonic            F is a SONiC config_db.json: tables and fields SONiC\n"
			       "                     has and rocesw does not model are warnings (each once),\n"
			       "                     not errors. A JSON object naming CONFIG_DB tables is\n"
			       "                     taken as one without the option.\n"
			       "  --schema-markdown  print the table reference of docs/config.md, generated\n"
			       "                     from the schema the compiler checks against\n");
			return 0;
		} else if (!strcmp(argv[i], "--sonic")) {
			o.sonic = 1;
		} else if (!strcmp(argv[i], "--schema-markdown") && argc == 2) {
			rsw_schema_markdown(stdout);
			return 0;
		} else {
			break;
		}
	}
	if (argc != i + 1) {
		fprintf(stderr, "usage: rocesw check-config [--sonic] F | --schema-markdown\n");
		return 2;
	}
	const char *path = argv[i];
	int zone = rsw_zone_detect(path, err, sizeof(err));
	if (zone < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (rsw_eal_init_quiet("rocesw") < 0)
		return 1;
	if (zone)
		return check_zone(path);
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	if (!sw || rsw_config_apply_opts(sw, path, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		rsw_switch_free(sw);
		return 1;
	}
	summary(path, sw);
	rsw_fib_process_exiting();
	rsw_switch_free(sw);
	return 0;
}
