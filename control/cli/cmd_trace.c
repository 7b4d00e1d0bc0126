/* `rocesw trace add N`, `rocesw show trace`, `rocesw clear trace` (also `rocesw trace show` and
 * `rocesw trace clear`): the live packet trace over the control socket, as VPP's `trace add
 * INPUT N` / `show trace` / `clear trace` (docs/control.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ctl_client.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw trace add N [--socket PATH]\n"
		"       rocesw show trace [--json] [--socket PATH]   (or: rocesw trace show)\n"
		"       rocesw clear trace [--socket PATH]           (or: rocesw trace clear)\n"
		"\n"
		"Traces frames through a running rocesw-dataplane's pipeline, as VPP's packet trace:\n"
		"  add N   every worker traces the next N frames it receives (1-256, added to what it\n"
		"          still has to trace, as far as its buffer of 256 frames holds): each stage's\n"
		"          decision (parsed fields, table and entry, hash key bytes and value, bucket,\n"
		"          member, queue, or the drop reason), the verdict, the first 64 bytes\n"
		"  show    what the workers traced, frame by frame\n"
		"  clear   drop what they traced and stop tracing\n"
		"The socket: --socket, else $ROCESW_SOCKET, else " RSW_CTL_DEFAULT_SOCKET ".\n"
		"add and clear are changes (refused to the read-only group); show is not.\n");
}

/* `show trace`'s text: one paragraph per frame, each stage's record indented under it. */
void rsw_print_trace(json_t *r)
{
	json_t *w, *p, *line;
	size_t i, j, k;
	unsigned n = 0;
	json_array_foreach(json_object_get(r, "workers"), i, w) {
		json_array_foreach(json_object_get(w, "packets"), j, p) {
			const char *sw = json_string_value(json_object_get(p, "switch"));
			printf("%sPacket %u (worker %lld): %s%s%s, %lld bytes at %.9f s: %s\n",
			       n ? "\n" : "", n + 1,
			       (long long)json_integer_value(json_object_get(w, "worker")),
			       sw ? sw : "", sw ? "|" : "",
			       json_string_value(json_object_get(p, "port")),
			       (long long)json_integer_value(json_object_get(p, "len")),
			       (double)json_integer_value(json_object_get(p, "t_ns")) / 1e9,
			       json_string_value(json_object_get(p, "verdict")));
			json_array_foreach(json_object_get(p, "trace"), k, line)
				printf("  %s\n", json_string_value(line));
			n++;
		}
	}
	if (!n)
		printf("no frame traced (rocesw trace add N starts)\n");
}

static int call(const char *sock, json_t *req, const char *what, int json)
{
	char err[1024];
	json_t *r = rsw_ctl_call(rsw_ctl_socket_path(sock), req, err, sizeof(err));
	json_decref(req);
	if (!r) {
		fprintf(stderr, "rocesw %s: %s\n", what, err);
		return 1;
	}
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	} else if (!strcmp(what, "show trace")) {
		rsw_print_trace(r);
	} else {
		printf("ok: %lld workers\n", (long long)json_integer_value(json_object_get(r,
											"workers")));
	}
	json_decref(r);
	return 0;
}

/* argv: the words after `trace` (add N | show | clear) with the options. */
static int trace_words(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *sock = NULL;
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': sock = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	int n = argc - optind;
	char **w = argv + optind;
	if (n == 2 && !strcmp(w[0], "add")) {
		char *end;
		long v = strtol(w[1], &end, 10);
		if (*end || end == w[1] || v < 1 || v > 256) {
			fprintf(stderr, "rocesw trace add: N must be 1-256 (frames per worker), got "
				"'%s'\n", w[1]);
			return 2;
		}
		return call(sock, json_pack("{s:s, s:i}", "op", "trace_add", "count", (int)v),
			    "trace add", json);
	}
	if (n == 1 && !strcmp(w[0], "show"))
		return call(sock, json_pack("{s:s}", "op", "trace_show"), "show trace", json);
	if (n == 1 && !strcmp(w[0], "clear"))
		return call(sock, json_pack("{s:s}", "op", "trace_clear"), "clear trace", json);
	usage(stderr);
	return 2;
}

int rsw_cmd_trace(int argc, char **argv)
{
	return trace_words(argc, argv);
}

/* `rocesw clear trace`: VPP's spelling. */
int rsw_cmd_clear(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "trace")) {
		argv[1] = "clear";
		return trace_words(argc, argv);
	}
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
