/* roceswd's metrics page (control/daemon/prom_metrics.c) against lines written here by hand from the
 * Prometheus text exposition format: label values escape backslash, double quote and line feed;
 * microseconds become seconds; every family has HELP and TYPE; build_info is 1; a zone's
 * switches are told apart by a switch label. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/daemon/prom_metrics.h"

static char *render(const char *counters_json)
{
	json_error_t je;
	json_t *c = json_loads(counters_json, 0, &je);
	assert_non_null(c);
	struct rsw_prom_daemon d = {.restarts = 2, .reloads_ok = 3, .generation = 7};
	size_t len = 0;
	char *text = rsw_prom_render(c, &d, &len);
	json_decref(c);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

static const char *COUNTERS =
	"{\"ports\": [{\"name\": \"Eth\\\"0\", \"rx_packets\": 5, \"queues\": [],"
	"  \"pfc\": {\"SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US\": 1500000}}],"
	" \"drops\": {\"voq_full\": 4},"
	" \"ecmp_groups\": [{\"name\": \"we\\\"ird\\\\grp\\nx\","
	"   \"members\": [{\"member\": 0, \"port\": \"Ethernet8\", \"packets\": 9}]}],"
	" \"conservation\": {\"received\": 5}}";

static void hostile_labels_escaped(void **state)
{
	(void)state;
	char *t = render(COUNTERS);
	/* the group's name is we"ird\grp<LF>x: written escaped by hand */
	assert_non_null(strstr(t, "rocesw_ecmp_member_packets_total{group=\"we\\\"ird\\\\grp\\nx\","
				  "member=\"0\",port=\"Ethernet8\"} 9\n"));
	assert_non_null(strstr(t, "rocesw_port_rx_packets_total{port=\"Eth\\\"0\"} 5\n"));
	assert_non_null(strstr(t, "rocesw_drops_total{reason=\"voq_full\"} 4\n"));
	/* no raw line feed inside any label: every line starts with '#' or 'rocesw_' */
	for (char *line = t; *line; line = strchr(line, '\n') + 1)
		assert_true(*line == '#' || !strncmp(line, "rocesw_", 7));
	free(t);
}

static void base_units_and_build_info(void **state)
{
	(void)state;
	char *t = render(COUNTERS);
	assert_null(strstr(t, "microseconds"));
	assert_non_null(strstr(t, "rocesw_pfc_rx_pause_seconds_total{port=\"Eth\\\"0\",priority=\"3\"} "
				  "1.500000\n"));
	assert_non_null(strstr(t, "rocesw_build_info{version=\"" RSW_VERSION "\"} 1\n"));
	assert_non_null(strstr(t, "rocesw_dataplane_restarts_total 2\n"));
	assert_non_null(strstr(t, "rocesw_config_generation 7\n"));
	free(t);
}

/* Each sample's family has a HELP and a TYPE line before its first sample. */
static void help_and_type_for_every_family(void **state)
{
	(void)state;
	char *t = render(COUNTERS);
	for (char *line = t; *line; line = strchr(line, '\n') + 1) {
		if (*line == '#')
			continue;
		size_t n = strcspn(line, "{ ");
		char help[160], type[160];
		snprintf(help, sizeof(help), "# HELP %.*s ", (int)n, line);
		snprintf(type, sizeof(type), "# TYPE %.*s ", (int)n, line);
		char *h = strstr(t, help), *ty = strstr(t, type);
		assert_non_null(h);
		assert_non_null(ty);
		assert_true(h < line && ty < line);
	}
	free(t);
}

/* The dataplane not answering: the daemon's own metrics only, up = 0. */
static void no_dataplane(void **state)
{
	(void)state;
	struct rsw_prom_daemon d = {0};
	size_t len = 0;
	char *t = rsw_prom_render(NULL, &d, &len);
	assert_non_null(strstr(t, "rocesw_dataplane_up 0\n"));
	assert_null(strstr(t, "rocesw_port_"));
	free(t);
}

/* A zone's counters (`show counters` of a --zone dataplane): every switch's samples, each with
 * its switch label first, under one HELP and one TYPE per family. */
static const char *ZONE =
	"{\"zone\": \"z\", \"switches\": ["
	" {\"name\": \"rtsw1\", \"ports\": [{\"name\": \"Ethernet0\", \"rx_packets\": 5,"
	"   \"queues\": [{\"queue\": 3, \"SAI_QUEUE_STAT_PACKETS\": 6}]}],"
	"  \"drops\": {\"voq_full\": 4}, \"conservation\": {\"received\": 5, \"queued\": 1}},"
	" {\"name\": \"ct\\\"sw\", \"ports\": [{\"name\": \"Ethernet0\", \"rx_packets\": 7}],"
	"  \"conservation\": {\"received\": 7}}]}";

static void zone_switch_labels(void **state)
{
	(void)state;
	char *t = render(ZONE);
	assert_non_null(strstr(t, "rocesw_port_rx_packets_total{switch=\"rtsw1\",port=\"Ethernet0\"} "
				  "5\n"));
	/* the second switch is named ct"sw: escaped */
	assert_non_null(strstr(t, "rocesw_port_rx_packets_total{switch=\"ct\\\"sw\",port=\"Ethernet0\"} "
				  "7\n"));
	assert_non_null(strstr(t, "rocesw_packets_received_total{switch=\"rtsw1\"} 5\n"));
	assert_non_null(strstr(t, "rocesw_packets_received_total{switch=\"ct\\\"sw\"} 7\n"));
	assert_non_null(strstr(t, "rocesw_packets_queued{switch=\"rtsw1\"} 1\n"));
	assert_non_null(strstr(t, "rocesw_queue_packets_total{switch=\"rtsw1\",port=\"Ethernet0\","
				  "queue=\"3\"} 6\n"));
	assert_non_null(strstr(t, "rocesw_drops_total{switch=\"rtsw1\",reason=\"voq_full\"} 4\n"));
	/* one TYPE line per family, however many switches */
	const char *type = "# TYPE rocesw_port_rx_packets_total ";
	char *first = strstr(t, type);
	assert_non_null(first);
	assert_null(strstr(first + 1, type));
	/* no sample without its switch in a zone, apart from the daemon's and build_info */
	for (char *line = t; *line; line = strchr(line, '\n') + 1)
		if (*line != '#' && strncmp(line, "rocesw_build_info", 17) &&
		    strncmp(line, "rocesw_dataplane_", 17) && strncmp(line, "rocesw_config_", 14) &&
		    strncmp(line, "rocesw_metrics_", 15))
			assert_true(strstr(line, "{switch=\"") == line + strcspn(line, "{"));
	free(t);
}

/* A group using ARS: its SAI counters as rocesw_ars_* families labelled group and mode, the
 * group name escaped; a page without ARS has no such family at all. */
static const char *ARS =
	"{\"ports\": [], \"ecmp_groups\": ["
	" {\"name\": \"up\\\"links\", \"members\": [],"
	"  \"ars\": {\"mode\": \"per_packet_random\", \"RSW_ARS_PACKETS\": 40,"
	"   \"SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS\": 17,"
	"   \"SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS\": 15,"
	"   \"SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS\": 2,"
	"   \"RSW_ARS_FLOWLET_TABLE_FULL\": 3}},"
	" {\"name\": \"plain\", \"members\": []}],"
	" \"conservation\": {}}";

static void ars_counters(void **state)
{
	(void)state;
	char *t = render(ARS);
	const char *want[] = {
		"# TYPE rocesw_ars_packets_total counter\n",
		"rocesw_ars_packets_total{group=\"up\\\"links\",mode=\"per_packet_random\"} 40\n",
		"rocesw_ars_nexthop_reassignments_total{group=\"up\\\"links\","
		"mode=\"per_packet_random\"} 17\n",
		"rocesw_ars_port_reassignments_total{group=\"up\\\"links\","
		"mode=\"per_packet_random\"} 15\n",
		"rocesw_ars_packet_drops_total{group=\"up\\\"links\",mode=\"per_packet_random\"} 2\n",
		"rocesw_ars_flowlet_table_full_total{group=\"up\\\"links\","
		"mode=\"per_packet_random\"} 3\n",
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_non_null(strstr(t, want[i]));
	assert_null(strstr(t, "group=\"plain\",mode"));
	free(t);
	t = render(COUNTERS);
	assert_null(strstr(t, "rocesw_ars_"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile_labels_escaped),
		cmocka_unit_test(ars_counters),
		cmocka_unit_test(base_units_and_build_info),
		cmocka_unit_test(help_and_type_for_every_family),
		cmocka_unit_test(no_dataplane),
		cmocka_unit_test(zone_switch_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
