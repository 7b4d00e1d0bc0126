/* Replay's event lines written directly (rp_log_fields) are byte for byte what jansson writes
 * for the same event (rp_log_event): names with quotes, backslashes, every control character,
 * UTF-8 and DEL, numbers from 0 to 2^63 - 1, names too long for the line's buffer, and the
 * order key of a zone's part in front. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/replay/replay_log.h"

/* The line each writer writes for one event. */
static void both(int keyed, uint64_t t, const char *node, const char *port, const char *key,
		 const char *s, uint64_t u)
{
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	struct rp_log la = {.f = open_memstream(&a, &na), .keyed = keyed, .t = 7, .id = 3};
	struct rp_log lb = {.f = open_memstream(&b, &nb), .keyed = keyed, .t = 7, .id = 3};
	json_t *f = json_object();
	json_object_set_new(f, key, s ? json_string(s) : json_integer((json_int_t)u));
	rp_log_event(&la, t, "ecn_mark", "switch", node, port, f);
	struct rp_field one = {.key = key, .s = s, .u = u};
	rp_log_fields(&lb, t, "ecn_mark", "switch", node, port, &one, 1);
	rp_log_close(&la); /* writes what it held */
	rp_log_close(&lb);
	fclose(la.f);
	fclose(lb.f);
	assert_true(na > 0);
	assert_string_equal(b, a);
	assert_int_equal(la.lines, lb.lines);
	free(a);
	free(b);
}

static void same_lines(void **state)
{
	(void)state;
	char ctl[40];
	for (unsigned c = 1; c < 0x20; c++)
		ctl[c - 1] = (char)c;
	memcpy(ctl + 31, "\"\\/\x7f", 5);
	const char *names[] = {"rtsw1", "a \"quoted\" \\ name", ctl, "spine-\xc3\xa9\xe2\x82\xac", ""};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (int keyed = 0; keyed < 2; keyed++) {
			both(keyed, 0, names[i], "Ethernet0", "queue", NULL, 3);
			both(keyed, 123456789012345ull, "ctsw1", names[i], "reason", names[i], 0);
			both(keyed, 1, names[i], NULL, "queue", NULL, INT64_MAX);
		}
	/* longer than the line's buffer: the same line all the same */
	char *big = malloc(3000);
	memset(big, 'x', 2999);
	big[2999] = 0;
	big[100] = '"';
	both(0, 5, big, big, "reason", big, 0);
	both(1, 5, big, "Ethernet8", "queue", NULL, 7);
	free(big);
}

/* One numbered line of the wake-up of entity id at t. */
static void line(struct rp_log *log, uint64_t t, uint32_t id, unsigned k)
{
	struct rp_field f = {.key = "k", .u = k};
	rp_log_wake(log, t, id);
	rp_log_fields(log, t, "drop", NULL, NULL, "Ethernet0", &f, 1);
}

/* A nanosecond's lines come out in their wake-ups' order (entity id; an entity woken twice in
 * it, in its wake-ups' order) whatever order they were written in; each nanosecond when the
 * next begins; with their keys in a part's log. */
static void key_order(void **state)
{
	(void)state;
	for (int keyed = 0; keyed < 2; keyed++) {
		char *a = NULL;
		size_t na = 0;
		struct rp_log log = {.f = open_memstream(&a, &na), .keyed = keyed};
		line(&log, 10, 9, 1);
		line(&log, 10, 4, 2);
		line(&log, 10, 9, 3);
		log.lines++; /* (a second line of that wake-up: its key counts on) */
		rp_log_fields(&log, 10, "drop", NULL, NULL, "Ethernet0",
			      &(struct rp_field){.key = "k", .u = 4}, 1);
		line(&log, 10, 2, 5);
		line(&log, 11, 1, 6); /* a new nanosecond: 10's lines are written */
		fflush(log.f);
		assert_int_equal(strstr(a, "\"k\":6") == NULL, 1);
		rp_log_close(&log);
		fclose(log.f);
		const char *want_plain =
			"{\"t\":10,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":5}\n"
			"{\"t\":10,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":2}\n"
			"{\"t\":10,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":1}\n"
			"{\"t\":10,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":3}\n"
			"{\"t\":10,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":4}\n"
			"{\"t\":11,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":6}\n";
		if (!keyed) {
			assert_string_equal(a, want_plain);
		} else { /* (time, entity + 1, line of its wake-up) before each line */
			const char *keys[] = {"000000000000000a0000000300000000",
					      "000000000000000a0000000500000000",
					      "000000000000000a0000000a00000000",
					      "000000000000000a0000000a00000000",
					      "000000000000000a0000000a00000002",
					      "000000000000000b0000000200000000"};
			const char *p = a, *w = want_plain;
			for (unsigned i = 0; i < 6; i++) {
				assert_memory_equal(p, keys[i], 32);
				const char *nl = strchr(w, '\n');
				assert_memory_equal(p + 33, w, (size_t)(nl - w + 1));
				p += 33 + (nl - w + 1);
				w = nl + 1;
			}
			assert_int_equal(*p, 0);
		}
		free(a);
	}
}

/* The samples of a period's start come before every wake-up of that nanosecond, entity 0's
 * too, and in a part's log carry the numbers given (their queues' places in the zone). */
static void samples_first(void **state)
{
	(void)state;
	for (int keyed = 0; keyed < 2; keyed++) {
		char *a = NULL;
		size_t na = 0;
		struct rp_log log = {.f = open_memstream(&a, &na), .keyed = keyed};
		line(&log, 19, 5, 1);
		rp_log_samples(&log, 20);
		rp_log_number(&log, 8);
		rp_log_fields(&log, 20, "queue_depth", NULL, NULL, "Ethernet0",
			      &(struct rp_field){.key = "k", .u = 2}, 1);
		rp_log_number(&log, 2049);
		rp_log_fields(&log, 20, "queue_depth", NULL, NULL, "Ethernet0",
			      &(struct rp_field){.key = "k", .u = 3}, 1);
		line(&log, 20, 0, 4);
		rp_log_close(&log);
		fclose(log.f);
		const char *want[] = {
			"{\"t\":19,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":1}\n",
			"{\"t\":20,\"event\":\"queue_depth\",\"port\":\"Ethernet0\",\"k\":2}\n",
			"{\"t\":20,\"event\":\"queue_depth\",\"port\":\"Ethernet0\",\"k\":3}\n",
			"{\"t\":20,\"event\":\"drop\",\"port\":\"Ethernet0\",\"k\":4}\n"};
		const char *keys[] = {"00000000000000130000000600000000",
				      "00000000000000140000000000000008",
				      "00000000000000140000000000000801",
				      "00000000000000140000000100000000"};
		const char *p = a;
		for (unsigned i = 0; i < 4; i++) {
			if (keyed) {
				assert_memory_equal(p, keys[i], 32);
				p += 33;
			}
			assert_memory_equal(p, want[i], strlen(want[i]));
			p += strlen(want[i]);
		}
		assert_int_equal(*p, 0);
		free(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(same_lines), cmocka_unit_test(key_order),
					   cmocka_unit_test(samples_first)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
