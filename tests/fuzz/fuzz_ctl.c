/* The control protocol's operations on a switch with the tables of tests/configs/ecmp4.yaml
 * and a traffic manager, as the dataplane's main lcore runs them, without ports or workers. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "dataplane/config/config.h"
#include "control/cli/eal_quiet.h"
#include "dataplane/live/dp_ctl.h"
#include "fuzz_targets.h"

static struct rsw_dp dp;
static struct rsw_ctl ctl;

int rsw_fuzz_ctl_init(const char *config)
{
	char err[1024];
	if (rsw_eal_init_quiet("fuzz_driver") < 0)
		return -1;
	rte_log_set_global_level(RTE_LOG_CRIT); /* no ethdev: its stats calls would complain */
	rsw_clock_init_tsc(&dp.clock);
	dp.sw = rsw_switch_new(NULL, err, sizeof(err));
	if (!dp.sw || rsw_config_apply(dp.sw, config, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_driver: %s\n", err);
		return -1;
	}
	dp.n_ports = dp.sw->state->n_ports;
	dp.n_workers = 1;
	dp.workers[0].cnt = rte_zmalloc("fuzz_cnt", sizeof(struct rsw_dp_counters), 64);
	dp.tm = rsw_tm_new("fuzz", dp.n_ports, 1, &rsw_switch_fib(dp.sw)->tm, 0, err, sizeof(err));
	if (!dp.workers[0].cnt || !dp.tm) {
		fprintf(stderr, "fuzz_driver: %s\n", dp.tm ? "out of memory" : err);
		return -1;
	}
	ctl.dp = &dp;
	ctl.listen_fd = -1;
	ctl.config_path = config;
	return 0;
}

int rsw_fuzz_ctl(const uint8_t *data, size_t size)
{
	int handled = 0;
	json_t *req = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	const char *op = json_is_object(req) ? json_string_value(json_object_get(req, "op")) : NULL;
	if (op) {
		char err[512];
		json_t *r = rsw_ctl_handle(&ctl, op, req, err, sizeof(err));
		if (!r && !err[0])
			abort(); /* an error must say what was wrong */
		handled = r ? 1 : 2;
		json_decref(r);
	}
	json_decref(req);
	return handled;
}

/* A value of a random kind, often one the handlers look for. */
static json_t *random_value(uint64_t (*rnd)(void))
{
	static const char *const strs[] = {
		"Ethernet0", "Ethernet16", "Ethernet99", "", "up", "down", "sideways", "10.9.0.0/16",
		"10.9.0.1/33", "::/0", "fd00::/8", "10.255.0.1", "300.1.1.1", "qp_only", "five_tuple",
		"counters", "ecmp", "routes", "config", "control", "nope", "/nonexistent",
		"tests/configs/ecmp4.yaml",
	};
	switch (rnd() % 8) {
	case 0: return json_string(strs[rnd() % (sizeof(strs) / sizeof(strs[0]))]);
	case 1: return json_integer((json_int_t)(rnd() % 70000));
	case 2: return json_integer((json_int_t)rnd());
	case 3: return json_integer(-(json_int_t)(rnd() % 10));
	case 4: return json_null();
	case 5: return json_boolean(rnd() & 1);
	case 6: return json_real(1e300);
	default: return rnd() & 1 ? json_array() : json_object();
	}
}

size_t rsw_fuzz_ctl_mutate(uint8_t *buf, size_t len, size_t cap, uint64_t (*rnd)(void))
{
	static const char *const ops[] = {"hello", "show", "set_port", "set_route", "del_route",
					  "pfc_storm", "hash_explain", "reload", "trace_add",
					  "trace_show", "trace_clear", "bogus"};
	static const char *const keys[] = {"op", "what", "port", "admin", "prefix", "nexthop",
					   "nexthop_group", "blackhole", "priority", "on", "src",
					   "dst", "sport", "dport", "qp", "in_port", "config", "v",
					   "count"};
	json_t *req = json_loadb((const char *)buf, len, 0, NULL);
	if (!json_is_object(req)) {
		json_decref(req);
		return len;
	}
	for (unsigned n = 1 + (unsigned)(rnd() % 4); n; n--) {
		const char *k = keys[rnd() % (sizeof(keys) / sizeof(keys[0]))];
		switch (rnd() % 4) {
		case 0: json_object_del(req, k); break;
		case 1:
			json_object_set_new(req, "op", json_string(ops[rnd() % (sizeof(ops) / sizeof(ops[0]))]));
			break;
		default: json_object_set_new(req, k, random_value(rnd)); break;
		}
	}
	char *text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text)
		return len;
	size_t n = strlen(text);
	if (n <= cap) {
		memcpy(buf, text, n);
		len = n;
	}
	free(text);
	return len;
}

void rsw_fuzz_ctl_fini(void)
{
	rsw_tm_free(dp.tm);
	rte_free(dp.workers[0].cnt);
	rsw_switch_free(dp.sw);
}
