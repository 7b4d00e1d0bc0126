/* `rocesw`: the offline tools and the CLI of a running switch. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw COMMAND [ARGS]\n"
		"\n"
		"commands:\n"
		"  inspect PCAP [--config F] [--in-port NAME] [--icrc] [--json]\n"
		"              run each packet through the parser (and with --config the ingress\n"
		"              tables) and print what it saw and decided\n"
		"  check-config F\n"
		"              load a switch config, print its errors or a summary\n"
		"  replay --config F --out DIR --in WHERE=FILE [...] | --in-dir DIR\n"
		"              captures through a switch or a zone on virtual time\n"
		"  gen --pattern ring|tree|all-to-all|incast --hosts N --out DIR [...]\n"
		"              per-host captures of the RoCEv2 traffic of a collective\n"
		"  hash --policy F --pcap F [--members N | --zone Z] [--fail M] [--json]\n"
		"              compare ECMP hash policies on captured traffic (hash lab)\n"
		"  show counters|ports|queues|buffers|pfc|watchdog|routes|ecmp|config [--json]\n"
		"              what a running dataplane has and counts (its control socket)\n"
		"  set port NAME up|down | pfc-storm PORT PRIO on|off | route PREFIX ...\n"
		"  del route PREFIX\n"
		"              fault injection and quick changes on a running dataplane\n"
		"\n"
		"rocesw COMMAND --help describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "inspect"))
		return rsw_cmd_inspect(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check-config"))
		return rsw_cmd_check_config(argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay"))
		return rsw_cmd_replay(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gen"))
		return rsw_cmd_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hash"))
		return rsw_cmd_hash(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return rsw_cmd_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "set"))
		return rsw_cmd_set(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del"))
		return rsw_cmd_del(argc - 1, argv + 1);
	fprintf(stderr, "rocesw: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
