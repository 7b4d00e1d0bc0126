/* Replay's event log (replay_log.h). */
#include "replay_log.h"

void rp_log_event(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		  const char *node, const char *port, json_t *fields)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_integer((json_int_t)t));
	json_object_set_new(o, "event", json_string(kind));
	if (node_key)
		json_object_set_new(o, node_key, json_string(node));
	if (port)
		json_object_set_new(o, "port", json_string(port));
	if (fields)
		json_object_update(o, fields);
	if (log->keyed) /* the line's order key (replay_part.h) */
		fprintf(log->f, "%016llx%08x%08x ", (unsigned long long)log->t, log->id,
			log->lines++);
	json_dumpf(o, log->f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', log->f);
	json_decref(o);
	json_decref(fields);
}

void rp_log_pfc(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		const char *node, const char *port, uint8_t enable, const uint16_t time[8])
{
	json_t *f = json_object(), *a = json_array();
	json_object_set_new(f, "class_enable", json_integer(enable));
	for (unsigned i = 0; i < 8; i++)
		json_array_append_new(a, json_integer(time[i]));
	json_object_set_new(f, "time", a);
	rp_log_event(log, t, kind, node_key, node, port, f);
}
