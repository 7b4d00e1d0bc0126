#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <pcap/pcap.h>

#include "dataplane/pipeline/pipeline.h"
#include "replay_trace.h"

struct rsw_replay_tracer {
	struct bpf_program prog;
	char filter[256];
	char path[4096];
	FILE *f;
	uint64_t traced, beyond;
};

static int match(void *arg, const uint8_t *frame, uint32_t len)
{
	struct rsw_replay_tracer *t = arg;
	struct pcap_pkthdr h = {.caplen = len, .len = len};
	if (!pcap_offline_filter(&t->prog, &h, frame))
		return 0;
	if (t->traced >= RSW_REPLAY_TRACE_MAX) {
		t->beyond++;
		return 0;
	}
	return 1;
}

static void write_one(void *arg, uint64_t t_ns, const char *sw, const char *port,
		      const struct rsw_fib *fib, const struct rsw_trace *tr,
		      const struct rsw_verdict *v)
{
	struct rsw_replay_tracer *t = arg;
	json_t *lines = json_array();
	for (unsigned i = 0; i < tr->n; i++) {
		char line[512];
		rsw_trace_rec_format(tr, &tr->rec[i], fib, line, sizeof(line));
		json_array_append_new(lines, json_string(line));
	}
	json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:s, s:o}", "t_ns", (json_int_t)t_ns,
			      "switch", sw, "port", port, "len", (json_int_t)tr->parsed.frame_len,
			      "verdict", rsw_verdict_name(v), "trace", lines);
	if (o) {
		json_dumpf(o, t->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', t->f);
	}
	json_decref(o);
	t->traced++;
}

struct rsw_replay_tracer *rsw_replay_tracer_open(const char *filter, const char *dir,
						 struct rsw_replay_trace *hooks, char *err,
						 size_t errlen)
{
	struct rsw_replay_tracer *t = calloc(1, sizeof(*t));
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (!t || !dead) {
		snprintf(err, errlen, "--trace: out of memory");
		free(t);
		if (dead)
			pcap_close(dead);
		return NULL;
	}
	if (pcap_compile(dead, &t->prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "--trace '%s': %s", filter, pcap_geterr(dead));
		pcap_close(dead);
		free(t);
		return NULL;
	}
	pcap_close(dead);
	snprintf(t->filter, sizeof(t->filter), "%s", filter);
	if (snprintf(t->path, sizeof(t->path), "%s/trace.jsonl", dir) >= (int)sizeof(t->path) ||
	    !(t->f = fopen(t->path, "we"))) {
		snprintf(err, errlen, "cannot write %s/trace.jsonl: %s", dir, strerror(errno));
		pcap_freecode(&t->prog);
		free(t);
		return NULL;
	}
	*hooks = (struct rsw_replay_trace){.match = match, .write = write_one, .arg = t};
	return t;
}

int rsw_replay_tracer_close(struct rsw_replay_tracer *t, FILE *out, char *err, size_t errlen)
{
	if (!t)
		return 0;
	if (t->beyond)
		fprintf(t->f, "{\"truncated\":true,\"traced\":%llu,\"not_traced\":%llu}\n",
			(unsigned long long)t->traced, (unsigned long long)t->beyond);
	int rc = (ferror(t->f) | fclose(t->f)) ? -1 : 0;
	if (!out) {
		unlink(t->path); /* the run failed: no trace of it */
	} else if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", t->path, strerror(errno));
		unlink(t->path); /* never a partial trace presented as whole */
	} else if (out) {
		fprintf(out, "trace: %llu arrivals matched '%s' and were traced: %s\n",
			(unsigned long long)t->traced, t->filter, t->path);
		if (t->beyond)
			fprintf(out, "trace: %llu more matched after the first %d, not traced\n",
				(unsigned long long)t->beyond, RSW_REPLAY_TRACE_MAX);
	}
	pcap_freecode(&t->prog);
	free(t);
	return rc;
}
