/* Deterministic mutation fuzzing of the fuzz targets (fuzz_targets.h), for CI: seeds (built-in
 * frames, or the frames of captures and the text of config files given as arguments) mutated by
 * bit flips, interesting bytes, insertions, deletions, truncation and splicing, from a fixed
 * random seed, so a failure replays exactly. Run under ASan + UBSan it checks that malformed
 * input never crashes, overreads, leaks or hits undefined behaviour.
 *
 * usage: fuzz_driver frame|config|ctl ITERATIONS [FILE ...]
 *        fuzz_driver cache ITERATIONS CONFIG [PCAP ...]
 *   frame: FILEs are pcap captures whose frames join the built-in seeds
 *   cache: the flow cache on and off (fuzz_cache.c) on CONFIG's tables; half the inputs are
 *     seeds unchanged, so that flows repeat; seeds as for frame, and frames to CONFIG's routes
 *   config: FILEs are YAML configs (the seeds)
 *   ctl: FILE is the switch config the requests act on; the seeds are built-in requests */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/roce_build.h"
#include "dataplane/tm/pfc.h"
#include "fuzz_targets.h"

#define MAX_SEEDS 4096
#define MAX_INPUT 16384

struct seed {
	uint8_t *data;
	size_t len;
};

static struct seed seeds[MAX_SEEDS];
static unsigned n_seeds;
static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static void add_seed(const uint8_t *d, size_t n)
{
	if (n_seeds == MAX_SEEDS || n > MAX_INPUT)
		return;
	seeds[n_seeds].data = malloc(n ? n : 1);
	if (!seeds[n_seeds].data)
		return;
	memcpy(seeds[n_seeds].data, d, n);
	seeds[n_seeds++].len = n;
}

static void builtin_frames(void)
{
	static const uint8_t opcodes[] = {0x00, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0B};
	for (unsigned i = 0; i < sizeof(opcodes); i++)
		for (unsigned pay = 0; pay <= 64; pay += 32) {
			struct rsw_roce_spec s = {.ttl = 2, .opcode = opcodes[i], .dest_qp = 0x1234 + i,
						  .dscp = 3, .ecn = 2, .sport = 49152, .payload = pay,
						  .src_ip = {10, 1, 0, 1}, .dst_ip = {10, 2, 0, 1}};
			uint8_t f[256];
			size_t n = rsw_roce_build(f, sizeof(f), &s);
			if (n)
				add_seed(f, n);
		}
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
	uint8_t pfc[RSW_PFC_FRAME_LEN], mac[6] = {2, 0, 0, 0, 1, 0};
	add_seed(pfc, rsw_pfc_build(pfc, mac, 0x08, t));
}

/* RoCE frames to the routes of tests/configs/flow-cache.yaml (and ecmp4.yaml): every group,
 * the blackhole, a miss, the switch's own address, TTL 1, the classifier's DSCP, opcodes, QPs. */
static void cache_frames(void)
{
	static const uint8_t dst[][4] = {{10, 1, 0, 1}, {10, 1, 0, 254}, {10, 2, 0, 9},
					 {10, 3, 1, 7}, {10, 4, 0, 3}, {10, 5, 2, 2},
					 {10, 6, 0, 1}, {10, 7, 0, 1}, {192, 0, 2, 1},
					 {10, 9, 0, 1}};
	static const uint8_t opcodes[] = {0x06, 0x07, 0x0A, 0x11, 0x81};
	/* frames of one opcode differ only in the QP (a UDF reads it), the DSCP or the TTL */
	for (unsigned d = 0; d < sizeof(dst) / sizeof(dst[0]); d++)
		for (unsigned o = 0; o < sizeof(opcodes); o++)
			for (unsigned q = 0; q < 5; q++) {
				struct rsw_roce_spec s = {
					.dmac = {2, 0, 0, 0, 1, 0}, .smac = {2, 0, 0, 0, 0x10, 1},
					.ttl = o == 4 && q == 3 ? 1 : 64, .opcode = opcodes[o],
					.dest_qp = 0x1230 + q % 4, .dscp = q == 4 ? 48 : 26,
					.ecn = 1, .sport = (uint16_t)(49152 + o % 2),
					.payload = 64u * (o % 3), .syndrome = 0x1F,
					.src_ip = {10, 1, 0, (uint8_t)(1 + o % 2)}};
				memcpy(s.dst_ip, dst[d], 4);
				uint8_t f[512];
				size_t n = rsw_roce_build(f, sizeof(f), &s);
				if (n)
					add_seed(f, n);
			}
}

static int load_pcap(const char *path)
{
	char e[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, e);
	if (!p) {
		fprintf(stderr, "fuzz_driver: %s: %s\n", path, e);
		return -1;
	}
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(p, &h, &d) == 1)
		add_seed(d, h->caplen);
	pcap_close(p);
	return 0;
}

static int load_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	static uint8_t buf[MAX_INPUT];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	add_seed(buf, n);
	return 0;
}

static const char *const tokens[] = {
	":", "{", "}", "[", "]", "\n", "- ", "|", ",", "\"", "0x", "-1", "999999999999999999999",
	"4294967296", "65536", "Ethernet0", "10.1.0.0/33", "::/129", "&a", "*a", "!!binary", "~",
	"PORT:", "NEIGH:", "STATIC_ROUTE:", "NEXTHOP_GROUP:", "BUFFER_PROFILE:", "HASH_POLICY:",
	"udf: [{base: L4, offset: 70000, length: 99}]", "speed: line", "pfc_enable: \"9\"",
	"null", "true", "1e309", "-0", "[]", "{}", "\"\\u0000\"", "18446744073709551616",
	"\"op\":", "\"port\":", "\"prefix\":", "\"qp\":", "\"what\":", "0.0.0.0/0",
};

static const char *const requests[] = {
	"{\"v\":1,\"op\":\"hello\"}",
	"{\"v\":1,\"op\":\"show\",\"what\":\"counters\"}",
	"{\"v\":1,\"op\":\"show\",\"what\":\"ecmp\"}",
	"{\"v\":1,\"op\":\"show\",\"what\":\"buffers\"}",
	"{\"v\":1,\"op\":\"show\",\"what\":\"routes\"}",
	"{\"v\":1,\"op\":\"set_port\",\"port\":\"Ethernet16\",\"admin\":\"down\"}",
	"{\"v\":1,\"op\":\"set_port\",\"port\":\"Ethernet16\",\"admin\":\"up\"}",
	"{\"v\":1,\"op\":\"set_route\",\"prefix\":\"10.9.0.0/16\",\"nexthop\":\"10.255.0.1\"}",
	"{\"v\":1,\"op\":\"set_route\",\"prefix\":\"fd00:9::/64\",\"blackhole\":true}",
	"{\"v\":1,\"op\":\"del_route\",\"prefix\":\"10.9.0.0/16\"}",
	"{\"v\":1,\"op\":\"set_route\",\"prefix\":\"10.8.0.0/16\",\"nexthop_group\":\"qp_only\"}",
	"{\"v\":1,\"op\":\"pfc_storm\",\"port\":\"Ethernet8\",\"priority\":3,\"on\":true}",
	("{\"v\":1,\"op\":\"hash_explain\",\"src\":\"10.1.0.1\",\"dst\":\"10.2.0.1\",\"qp\":4660,"
	 "\"sport\":49152,\"in_port\":\"Ethernet0\"}"),
	"{\"v\":1,\"op\":\"reload\",\"config\":\"/nonexistent.yaml\"}",
};

static size_t mutate(uint8_t *buf, size_t len, int text)
{
	unsigned rounds = 1 + (unsigned)(next() % 8);
	for (unsigned r = 0; r < rounds; r++) {
		size_t pos = len ? (size_t)(next() % len) : 0;
		switch (next() % (text ? 7 : 6)) {
		case 0: /* flip a bit */
			if (len)
				buf[pos] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 1: { /* an interesting byte */
			static const uint8_t v[] = {0x00, 0xFF, 0x7F, 0x80, 0x01, 0x40, 0x45, 0x60,
						    0x11, 0x12, 0xB7};
			if (len)
				buf[pos] = v[next() % sizeof(v)];
			break;
		}
		case 2: /* truncate */
			len = len ? (size_t)(next() % (len + 1)) : 0;
			break;
		case 3: { /* delete a range */
			size_t n = len - pos ? (size_t)(next() % (len - pos)) : 0;
			memmove(buf + pos, buf + pos + n, len - pos - n);
			len -= n;
			break;
		}
		case 4: { /* insert random bytes */
			size_t n = 1 + (size_t)(next() % 16);
			if (len + n > MAX_INPUT)
				break;
			memmove(buf + pos + n, buf + pos, len - pos);
			for (size_t i = 0; i < n; i++)
				buf[pos + i] = (uint8_t)next();
			len += n;
			break;
		}
		case 5: { /* splice another seed's tail */
			const struct seed *s = &seeds[next() % n_seeds];
			size_t from = s->len ? (size_t)(next() % s->len) : 0;
			size_t n = s->len - from;
			if (pos + n > MAX_INPUT)
				n = MAX_INPUT - pos;
			memcpy(buf + pos, s->data + from, n);
			len = pos + n;
			break;
		}
		default: { /* text: insert a token */
			const char *t = tokens[next() % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t n = strlen(t);
			if (len + n > MAX_INPUT)
				break;
			memmove(buf + pos + n, buf + pos, len - pos);
			memcpy(buf + pos, t, n);
			len += n;
		}
		}
	}
	return len;
}

/* The flow cache on and off: seeds, then each iteration a seed unchanged or mutated. */
static int cache_main(unsigned long iterations, const char *config, int n_pcap, char **pcap)
{
	if (rsw_fuzz_cache_init(config) < 0)
		return 1;
	builtin_frames();
	cache_frames();
	for (int i = 0; i < n_pcap; i++)
		if (load_pcap(pcap[i]) < 0)
			return 1;
	static uint8_t buf[MAX_INPUT];
	for (unsigned s = 0; s < n_seeds; s++)
		rsw_fuzz_cache(seeds[s].data, seeds[s].len);
	for (unsigned long it = 0; it < iterations; it++) {
		const struct seed *s = &seeds[next() % n_seeds];
		memcpy(buf, s->data, s->len);
		size_t len = next() & 1 ? s->len : mutate(buf, s->len, 0);
		rsw_fuzz_cache(buf, len);
	}
	int rc = rsw_fuzz_cache_fini();
	for (unsigned s = 0; s < n_seeds; s++)
		free(seeds[s].data);
	if (rc < 0)
		fprintf(stderr, "fuzz_driver cache: the cache answered too rarely to check it\n");
	return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "frame") && strcmp(argv[1], "config") &&
			 strcmp(argv[1], "ctl") && strcmp(argv[1], "cache")) ||
	    (!strcmp(argv[1], "ctl") && argc != 4) || (!strcmp(argv[1], "cache") && argc < 4)) {
		fprintf(stderr, "usage: fuzz_driver frame|config ITERATIONS [FILE ...]\n"
				"       fuzz_driver ctl ITERATIONS CONFIG\n"
				"       fuzz_driver cache ITERATIONS CONFIG [PCAP ...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "cache"))
		return cache_main(strtoul(argv[2], NULL, 10), argv[3], argc - 4, argv + 4);
	int ctl = !strcmp(argv[1], "ctl"), text = ctl || !strcmp(argv[1], "config");
	int (*target)(const uint8_t *, size_t) = ctl ? rsw_fuzz_ctl
						     : text ? rsw_fuzz_config : rsw_fuzz_frame;
	unsigned long iterations = strtoul(argv[2], NULL, 10);
	if (ctl) {
		if (rsw_fuzz_ctl_init(argv[3]) < 0)
			return 1;
		for (unsigned i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
			add_seed((const uint8_t *)requests[i], strlen(requests[i]));
	} else {
		if (!text)
			builtin_frames();
		for (int i = 3; i < argc; i++)
			if ((text ? load_file(argv[i]) : load_pcap(argv[i])) < 0)
				return 1;
	}
	if (!n_seeds) {
		fprintf(stderr, "fuzz_driver: no seeds\n");
		return 1;
	}
	static uint8_t buf[MAX_INPUT];
	unsigned long outcome[3] = {0};
	for (unsigned s = 0; s < n_seeds; s++) /* the seeds themselves first */
		outcome[target(seeds[s].data, seeds[s].len) % 3]++;
	for (unsigned long it = 0; it < iterations; it++) {
		const struct seed *s = &seeds[next() % n_seeds];
		memcpy(buf, s->data, s->len);
		/* requests: half structural (valid JSON, odd values), half bytes */
		size_t len = ctl && (next() & 1) ? rsw_fuzz_ctl_mutate(buf, s->len, MAX_INPUT, next)
						 : mutate(buf, s->len, text);
		outcome[target(buf, len) % 3]++;
	}
	printf("fuzz_driver %s: %u seeds, %lu mutated inputs, no failure", argv[1], n_seeds,
	       iterations);
	if (ctl)
		printf(" (%lu requests handled, %lu refused with a message, %lu not requests)",
		       outcome[1], outcome[2], outcome[0]);
	else if (!text)
		printf(" (%lu frames taken by the parser's RoCE fast path, each read as the full "
		       "parser reads it)", outcome[1]);
	printf("\n");
	for (unsigned s = 0; s < n_seeds; s++)
		free(seeds[s].data);
	if (ctl)
		rsw_fuzz_ctl_fini();
	return 0;
}
