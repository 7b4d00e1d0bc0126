/* `rocesw report compare RUN_DIR... --out FILE.html`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report_compare.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw report compare RUN_DIR... --out FILE.html\n"
		"\n"
		"Draws several `rocesw replay` runs on one self-contained page (nothing is fetched\n"
		"when it is viewed): an overview table with a column per run, then each kind of\n"
		"chart for every run side by side on shared axes (same time range, same y maximum):\n"
		"topology, flow-completion CDFs (one chart), queue depth, link utilization by tier,\n"
		"PFC pauses, ECN marks, closed-loop collectives.\n"
		"\n"
		"  RUN_DIR        a replay's --out directory (summary.json, events.jsonl); written\n"
		"                 NAME=DIR it is labelled NAME, else by its directory's last part\n"
		"  --out FILE     the page to write\n"
		"  --help         this text\n");
}

int rsw_cmd_report(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "compare")) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	argc--;
	argv++;
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *out = NULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	unsigned n = (unsigned)(argc - optind);
	if (!out || !n) {
		fprintf(stderr, "rocesw report compare: %s\n",
			!out ? "--out FILE is required" : "name at least one RUN_DIR");
		return 2;
	}
	const char **dirs = calloc(n, sizeof(*dirs)), **names = calloc(n, sizeof(*names));
	char **own = calloc(n, sizeof(*own));
	int rc = 1;
	if (!dirs || !names || !own) {
		fprintf(stderr, "rocesw report compare: out of memory\n");
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		char *arg = argv[optind + (int)i], *eq = strchr(arg, '=');
		if (eq) {
			own[i] = strndup(arg, (size_t)(eq - arg));
			names[i] = own[i];
			dirs[i] = eq + 1;
		} else {
			dirs[i] = arg;
			size_t len = strlen(arg);
			while (len > 1 && arg[len - 1] == '/')
				len--;
			const char *s = arg + len;
			while (s > arg && s[-1] != '/')
				s--;
			own[i] = strndup(s, (size_t)(arg + len - s));
			names[i] = own[i];
		}
		if (!names[i]) {
			fprintf(stderr, "rocesw report compare: out of memory\n");
			goto out;
		}
	}
	char err[512] = "";
	if (rsw_report_compare(dirs, names, n, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw report compare: %s\n", err);
		goto out;
	}
	rc = 0;
out:
	for (unsigned i = 0; own && i < n; i++)
		free(own[i]);
	free(own);
	free(dirs);
	free(names);
	return rc;
}
