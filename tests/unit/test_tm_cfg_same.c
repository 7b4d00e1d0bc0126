/* Replay hands switches whose TM settings are the same one copy of them (rsw_tm_config_same,
 * rsw_tm_config_copy): settings compiled from one config are the same whatever their ECN seed
 * (read once, when a TM is made); a change to any setting of any port a switch has makes them
 * differ, bytes past its ports do not; a copy is the same and zero past its ports; an RTSW's
 * and a CTSW's settings differ.
 *
 * argv[1]: the source tree (config/rtsw.yaml and config/ctsw.yaml are read from it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/config/config.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/switch.h"
#include "dataplane/tm/tm_cfg.h"

static const char *src_root = ".";
static char err[4096];

static struct rsw_switch *load(const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/config/%s", src_root, rel);
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	assert_non_null(sw);
	if (rsw_config_apply(sw, path, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	return sw;
}

/* A copy made by hand, whole, that the test may change */
static struct rsw_tm_config *dup_whole(const struct rsw_tm_config *c)
{
	struct rsw_tm_config *d = aligned_alloc(64, sizeof(*d));
	assert_non_null(d);
	memcpy(d, c, sizeof(*d));
	return d;
}

static void same_config_same_settings(void **state)
{
	(void)state;
	struct rsw_switch *a = load("rtsw.yaml"), *b = load("rtsw.yaml");
	const struct rsw_tm_config *ta = &rsw_switch_fib(a)->tm, *tb = &rsw_switch_fib(b)->tm;
	assert_true(ta->n_ports > 1);
	assert_true(rsw_tm_config_same(ta, tb));
	struct rsw_tm_config *d = dup_whole(ta);
	d->pools.ecn_seed = ta->pools.ecn_seed + 7;
	assert_true(rsw_tm_config_same(ta, d));
	/* bytes of a port it does not have */
	memset(&d->port[d->n_ports], 0x5A, sizeof(d->port[0]));
	memset(d->port_name[d->n_ports], 'x', RSW_TM_NAME_MAX - 1);
	assert_true(rsw_tm_config_same(ta, d));
	free(d);
	rsw_switch_free(a);
	rsw_switch_free(b);
}

static void any_setting_of_a_port_differs(void **state)
{
	(void)state;
	struct rsw_switch *a = load("rtsw.yaml");
	const struct rsw_tm_config *ta = &rsw_switch_fib(a)->tm;
	unsigned last = ta->n_ports - 1u;
	struct rsw_tm_config *d = dup_whole(ta);
	d->queue_hot[last][3].kmin++;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->pg_hot[0][3].pfc ^= 1;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->speed_mbps[last] /= 4;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->port_name[last][0] ^= 1;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->brief[last].refresh_ns++;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->port[last].wd[5].enabled ^= 1;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->pools.pfcwd_poll_ns++;
	assert_false(rsw_tm_config_same(ta, d));
	memcpy(d, ta, sizeof(*d));
	d->n_ports--;
	assert_false(rsw_tm_config_same(ta, d));
	free(d);
	rsw_switch_free(a);
}

static void copy_is_same_and_zero_past_its_ports(void **state)
{
	(void)state;
	struct rsw_switch *a = load("rtsw.yaml");
	const struct rsw_tm_config *ta = &rsw_switch_fib(a)->tm;
	struct rsw_tm_config *d = aligned_alloc(64, sizeof(*d));
	assert_non_null(d);
	memset(d, 0xA5, sizeof(*d));
	rsw_tm_config_copy(d, ta);
	assert_true(rsw_tm_config_same(ta, d));
	assert_true(rsw_tm_config_same(d, ta));
	static const struct rsw_tm_port_cfg zero_port;
	static const struct rsw_tm_queue_hot_cfg zero_queue;
	assert_memory_equal(&d->port[d->n_ports], &zero_port, sizeof(zero_port));
	assert_memory_equal(&d->queue_hot[RSW_TM_MAX_PORTS - 1][7], &zero_queue, sizeof(zero_queue));
	assert_int_equal(d->speed_mbps[d->n_ports], 0);
	free(d);
	rsw_switch_free(a);
}

static void rtsw_and_ctsw_differ(void **state)
{
	(void)state;
	struct rsw_switch *a = load("rtsw.yaml"), *b = load("ctsw.yaml");
	assert_false(rsw_tm_config_same(&rsw_switch_fib(a)->tm, &rsw_switch_fib(b)->tm));
	rsw_switch_free(a);
	rsw_switch_free(b);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		src_root = argv[1];
	if (rsw_eal_init_quiet("test_tm_cfg_same") < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_config_same_settings),
		cmocka_unit_test(any_setting_of_a_port_differs),
		cmocka_unit_test(copy_is_same_and_zero_past_its_ports),
		cmocka_unit_test(rtsw_and_ctsw_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
