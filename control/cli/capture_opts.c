/* `rocesw replay` capture options (capture_opts.h). */
#include <stdlib.h>
#include <string.h>

#include "capture_opts.h"

#define MAX_ONLY 64

static int number(const char *opt, const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;
	*v = strtoull(s, &end, 10);
	if (!*s || *end || s[0] == '-' || *v > max) {
		fprintf(stderr, "rocesw replay: --%s expects a number up to %llu, got '%s'\n", opt, max,
			s);
		return -1;
	}
	return 0;
}

int rsw_capture_opt(int opt, const char *arg, struct rsw_replay_capture *c)
{
	static const char *only[MAX_ONLY];
	unsigned long long v, w;
	switch (opt) {
	case RSW_OPT_CAPTURES:
		if (strcmp(arg, "all") && strcmp(arg, "none")) {
			fprintf(stderr, "rocesw replay: --captures expects all or none, got '%s'\n", arg);
			return -1;
		}
		c->off = !strcmp(arg, "none");
		return 1;
	case RSW_OPT_CAPTURE_ONLY:
		if (c->n_only == MAX_ONLY) {
			fprintf(stderr, "rocesw replay: at most %d --capture-only patterns\n", MAX_ONLY);
			return -1;
		}
		only[c->n_only++] = arg;
		c->only = only;
		return 1;
	case RSW_OPT_CAPTURE_WINDOW: {
		const char *colon = strchr(arg, ':');
		char from[32];
		if (!colon || (size_t)(colon - arg) >= sizeof(from)) {
			fprintf(stderr, "rocesw replay: --capture-window expects FROM:TO in ns, got '%s'\n",
				arg);
			return -1;
		}
		snprintf(from, sizeof(from), "%.*s", (int)(colon - arg), arg);
		if (number("capture-window", from, UINT64_MAX, &v) < 0 ||
		    (colon[1] && number("capture-window", colon + 1, UINT64_MAX, &w) < 0))
			return -1;
		if (!colon[1])
			w = 0;
		if (w && w <= v) {
			fprintf(stderr, "rocesw replay: --capture-window %s: TO must be after FROM\n", arg);
			return -1;
		}
		c->from_ns = v;
		c->to_ns = w;
		return 1;
	}
	case RSW_OPT_CAPTURE_EVERY:
		if (number("capture-every", arg, UINT32_MAX, &v) < 0)
			return -1;
		c->every = (uint32_t)v;
		return 1;
	case RSW_OPT_CAPTURE_SNAPLEN:
		if (number("capture-snaplen", arg, 65535, &v) < 0)
			return -1;
		if (v && v < 14) {
			fprintf(stderr, "rocesw replay: --capture-snaplen %llu would cut the Ethernet "
					"header (at least 14)\n", v);
			return -1;
		}
		c->snaplen = (uint32_t)v;
		c->snaplen_given = 1;
		return 1;
	case RSW_OPT_CAPTURE_FILTER:
		c->filter = arg;
		return 1;
	default:
		return 0;
	}
}

void rsw_capture_print(FILE *f, const struct rsw_replay_capture *c, const char *dir)
{
	if (!c->files) {
		fprintf(f, "captures: none written\n");
		return;
	}
	fprintf(f, "captures: %u files, %.1f MB in %s", c->files, (double)c->bytes / 1e6, dir);
	if (c->snaplen && !c->snaplen_given)
		fprintf(f, " (the first %u bytes of each frame: the collective's payload is "
			   "generated; --capture-snaplen 0 keeps it)", c->snaplen);
	fputc('\n', f);
}
