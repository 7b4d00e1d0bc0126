/* `rocesw`: the offline tools and the CLI of a running switch. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "huge_heap.h"

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
		"  te --config ZONE --collective SPEC [--fail WHAT] [--out DIR] [--json]\n"
		"              centralized traffic engineering: CSPF paths and the policy routes\n"
		"              that pin them, in rocesw, SONiC and EOS forms\n"
		"  report compare RUN_DIR... --out FILE.html\n"
		"              several replay runs on one page, side by side on shared axes\n"
		"  gen --pattern ring|tree|all-to-all|incast --hosts N --out DIR [...]\n"
		"              per-host captures of the RoCEv2 traffic of a collective\n"
		"  hash --policy F --pcap F [--members N | --zone Z] [--fail M] [--json]\n"
		"              compare ECMP hash policies on captured traffic (hash lab)\n"
		"  show counters|ports|queues|buffers|pfc|watchdog|routes|ecmp|config [--json]\n"
		"              what a running dataplane has and counts (its control socket)\n"
		"  set port NAME up|down | pfc-storm PORT PRIO on|off | route PREFIX ...\n"
		"  del route PREFIX\n"
		"              fault injection and quick changes on a running dataplane\n"
		"  trace add N | show trace | clear trace\n"
		"              trace the next N frames each worker of a running dataplane receives\n"
		"              through its pipeline, stage by stage (as VPP's packet trace)\n"
		"  reload CONFIG\n"
		"              apply a config to a running dataplane (the file is passed open)\n"
		"  send IFACE PCAP... [--rate FPS | --fast] [--ignore-pfc] [--json]\n"
		"              a lab host: send captures at their timestamps over AF_XDP,\n"
		"              holding the priorities the switch pauses (PFC read by XDP)\n"
		"\n"
		"rocesw COMMAND --help describes a command; rocesw --version prints the version.\n");
}

/* The subcommands, one row each. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"inspect", rsw_cmd_inspect}, {"check-config", rsw_cmd_check_config},
	{"replay", rsw_cmd_replay},   {"gen", rsw_cmd_gen},
	{"hash", rsw_cmd_hash},       {"show", rsw_cmd_show},
	{"set", rsw_cmd_set},         {"del", rsw_cmd_del},
	{"report", rsw_cmd_report},
	{"reload", rsw_cmd_reload},
	{"send", rsw_cmd_send},
	{"te", rsw_cmd_te},
	{"trace", rsw_cmd_trace},
	{"clear", rsw_cmd_clear},
};

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("rocesw %s\n", RSW_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "replay"))
		rsw_huge_heap(argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "rocesw: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
