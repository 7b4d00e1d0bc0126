/* `rocesw set ...` / `rocesw del route` / `rocesw reload F`: changes to a running dataplane over
 * its control socket, each one transaction (applied whole or refused with the reason). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "ctl_client.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw set port NAME up|down [--socket PATH]\n"
		"       rocesw set pfc-storm PORT PRIORITY on|off [--socket PATH]\n"
		"       rocesw set route PREFIX nexthop IP|group NAME|blackhole [--socket PATH]\n"
		"       rocesw del route PREFIX [--socket PATH]\n"
		"       rocesw reload CONFIG [--socket PATH]\n"
		"\n"
		"Fault injection and quick experiments on a running rocesw-dataplane (its control\n"
		"socket: --socket, else $ROCESW_SOCKET, else " RSW_CTL_DEFAULT_SOCKET ").\n"
		"A dataplane running a zone needs the switch: --switch NAME, or a port written\n"
		"SWITCH|PORT (rocesw set port rtsw1|Ethernet256 down).\n"
		"  port NAME down   the port leaves its ECMP groups through the resilient bucket\n"
		"                   table: only the flows that used it move; up brings it back\n"
		"  pfc-storm        the port's egress acts as if its peer kept sending PFC XOFF for\n"
		"                   PRIORITY (0-7), as a PFC storm would, to exercise the watchdog\n"
		"  route            add or replace a main-table route; del route removes one\n"
		"  reload CONFIG    apply a whole config as the difference to the running tables;\n"
		"                   the file is opened here, with your rights, and passed open\n");
}

static const char *g_switch; /* --switch NAME: the zone's switch the request is for */

/* Splits off --socket PATH and --switch NAME wherever they are; returns the remaining argument
 * count. */
static int take_socket(int argc, char **argv, const char **sock)
{
	int n = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			*sock = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--switch") && i + 1 < argc) {
			g_switch = argv[++i];
			continue;
		}
		argv[n++] = argv[i];
	}
	return n;
}

/* --help, or the words after the subcommand with --socket taken out. */
static int help_or_args(int *argc, char ***argv, const char **sock)
{
	if (*argc >= 2 && (!strcmp((*argv)[1], "--help") || !strcmp((*argv)[1], "-h"))) {
		usage(stdout);
		return 1;
	}
	*argc = take_socket(*argc - 1, *argv + 1, sock);
	(*argv)++;
	return 0;
}

static int call(const char *sock, json_t *req, const char *what)
{
	char err[1024];
	if (g_switch)
		json_object_set_new(req, "switch", json_string(g_switch));
	json_t *r = rsw_ctl_call(rsw_ctl_socket_path(sock), req, err, sizeof(err));
	json_decref(req);
	if (!r) {
		fprintf(stderr, "rocesw %s: %s\n", what, err);
		return 1;
	}
	json_t *g = json_object_get(r, "generation");
	if (g)
		printf("ok: tables at generation %lld\n", (long long)json_integer_value(g));
	else
		printf("ok\n");
	json_decref(r);
	return 0;
}

int rsw_cmd_set(int argc, char **argv)
{
	const char *sock = NULL;
	if (help_or_args(&argc, &argv, &sock))
		return 0;
	if (argc == 3 && !strcmp(argv[0], "port") &&
	    (!strcmp(argv[2], "up") || !strcmp(argv[2], "down")))
		return call(sock, json_pack("{s:s, s:s, s:s}", "op", "set_port", "port", argv[1],
					    "admin", argv[2]), "set port");
	if (argc == 4 && !strcmp(argv[0], "pfc-storm") &&
	    (!strcmp(argv[3], "on") || !strcmp(argv[3], "off"))) {
		char *end;
		long prio = strtol(argv[2], &end, 10);
		if (*end || end == argv[2] || prio < 0 || prio > 7) {
			fprintf(stderr, "rocesw set pfc-storm: priority must be 0-7, got '%s'\n", argv[2]);
			return 2;
		}
		return call(sock, json_pack("{s:s, s:s, s:i, s:b}", "op", "pfc_storm", "port", argv[1],
					    "priority", (int)prio, "on", !strcmp(argv[3], "on")),
			    "set pfc-storm");
	}
	if (!strcmp(argv[0], "route") && (argc == 3 || argc == 4)) {
		json_t *req = json_pack("{s:s, s:s}", "op", "set_route", "prefix", argv[1]);
		if (argc == 3 && !strcmp(argv[2], "blackhole"))
			json_object_set_new(req, "blackhole", json_true());
		else if (argc == 4 && !strcmp(argv[2], "nexthop"))
			json_object_set_new(req, "nexthop", json_string(argv[3]));
		else if (argc == 4 && !strcmp(argv[2], "group"))
			json_object_set_new(req, "nexthop_group", json_string(argv[3]));
		else {
			json_decref(req);
			usage(stderr);
			return 2;
		}
		return call(sock, req, "set route");
	}
	usage(stderr);
	return 2;
}

int rsw_cmd_del(int argc, char **argv)
{
	const char *sock = NULL;
	if (help_or_args(&argc, &argv, &sock))
		return 0;
	if (argc == 2 && !strcmp(argv[0], "route"))
		return call(sock, json_pack("{s:s, s:s}", "op", "del_route", "prefix", argv[1]),
			    "del route");
	usage(stderr);
	return 2;
}

int rsw_cmd_reload(int argc, char **argv)
{
	const char *sock = NULL;
	if (help_or_args(&argc, &argv, &sock))
		return 0;
	if (argc != 1) {
		usage(stderr);
		return 2;
	}
	char err[2048];
	const char *path = rsw_ctl_socket_path(sock);
	int fd = rsw_ctl_send_reload(path, argv[0], argv[0], err, sizeof(err));
	/* no time limit: a large config takes the dataplane a while, and it answers when done */
	json_t *r = fd < 0 ? NULL : rsw_ctl_recv(fd, path, -1, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "rocesw reload: %s\n", err);
		return 1;
	}
	printf("ok: %lld table writes, tables at generation %lld\n",
	       (long long)json_integer_value(json_object_get(r, "writes")),
	       (long long)json_integer_value(json_object_get(r, "generation")));
	json_decref(r);
	return 0;
}
