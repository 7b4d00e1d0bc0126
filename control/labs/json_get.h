/* Reading a summary.json back: a missing or mistyped field reads as 0 or "", which is what the
 * reports show for a run that did not have it. */
#ifndef RSW_JSON_GET_H
#define RSW_JSON_GET_H

#include <stdint.h>

#include <jansson.h>

static inline uint64_t ju(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static inline const char *js(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

#endif
