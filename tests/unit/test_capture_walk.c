/* Replay's inputs read in place (dataplane/replay/capture_walk.c) give what libpcap gives: pcap
 * files written by hand here in both byte orders with micro- and nanosecond stamps are walked
 * where they lie in the blocks read, with the times and bytes they were written with; a record
 * libpcap cuts to the snap length, a link type with FCS bits, and files cut in a record's header
 * or its bytes are read on by libpcap from that record, with libpcap's own frames and error
 * messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dataplane/replay/replay_capture.h"

struct rec {
	uint32_t sec, frac, caplen, wire;
	uint8_t fill; /* every byte of the frame */
};

static void put32(FILE *f, uint32_t v, int be)
{
	uint8_t b[4];
	for (unsigned i = 0; i < 4; i++)
		b[i] = (uint8_t)(be ? v >> (24 - 8 * i) : v >> (8 * i));
	fwrite(b, 1, 4, f);
}

static void put16(FILE *f, uint16_t v, int be)
{
	uint8_t b[2] = {(uint8_t)(be ? v >> 8 : v), (uint8_t)(be ? v : v >> 8)};
	fwrite(b, 1, 2, f);
}

/* A pcap file of recs; cut > 0 keeps only its first cut bytes. */
static char *write_pcap(int be, int nsec, uint32_t snaplen, uint32_t linktype,
			const struct rec *recs, unsigned n, long cut)
{
	static unsigned k;
	char *path = malloc(64);
	snprintf(path, 64, "/tmp/rsw-capwalk-%d-%u.pcap", (int)getpid(), k++);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	put32(f, nsec ? 0xa1b23c4du : 0xa1b2c3d4u, be);
	put16(f, 2, be);
	put16(f, 4, be);
	put32(f, 0, be);
	put32(f, 0, be);
	put32(f, snaplen, be);
	put32(f, linktype, be);
	for (unsigned i = 0; i < n; i++) {
		put32(f, recs[i].sec, be);
		put32(f, recs[i].frac, be);
		put32(f, recs[i].caplen, be);
		put32(f, recs[i].wire, be);
		for (uint32_t b = 0; b < recs[i].caplen; b++)
			fputc(recs[i].fill, f);
	}
	fclose(f);
	if (cut > 0)
		assert_int_equal(truncate(path, cut), 0);
	return path;
}

/* What libpcap itself reads of path, record by record, compared with rp_cap_read's; returns
 * the frames read. err_out gets libpcap's error, if it ended on one. */
static unsigned same_as_libpcap(const char *path, int walked, char *err_out, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE], err[512] = "";
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	assert_non_null(p);
	struct cap_in in = {0};
	assert_int_equal(rp_cap_open(&in, path, err, sizeof(err)), 0);
	assert_int_equal(in.stable, walked);
	unsigned n = 0;
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int rc = pcap_next_ex(p, &h, &d);
		int mine = rp_cap_read(&in, err, sizeof(err));
		if (rc == 1) {
			assert_int_equal(mine, 0);
			assert_false(in.eof);
			assert_int_equal(in.t, (uint64_t)h->ts.tv_sec * 1000000000u + h->ts.tv_usec);
			assert_int_equal(in.len, h->caplen);
			assert_memory_equal(in.data, d, h->caplen);
			n++;
			continue;
		}
		assert_true(in.eof);
		if (rc == -2) {
			assert_int_equal(mine, 0);
			err_out[0] = 0;
		} else {
			assert_int_equal(mine, -1);
			/* rp_cap_read names the file before libpcap's reason */
			char want[512];
			snprintf(want, sizeof(want), "%s: %s", path, pcap_geterr(p));
			assert_string_equal(err, want);
			snprintf(err_out, errlen, "%s", pcap_geterr(p));
		}
		break;
	}
	pcap_close(p);
	rp_cap_close(&in);
	return n;
}

static const struct rec recs[] = {
	{1, 999999, 60, 60, 0x11},
	{2, 5, 4170, 4170, 0x22},
	{7, 123456, 100, 1500, 0x33}, /* captured short of its length on the wire */
};

static void both_orders_and_precisions(void **state)
{
	(void)state;
	for (int be = 0; be < 2; be++)
		for (int nsec = 0; nsec < 2; nsec++) {
			char *path = write_pcap(be, nsec, 65535, 1, recs, 3, 0);
			struct cap_in in = {0};
			char err[256];
			assert_int_equal(rp_cap_open(&in, path, err, sizeof(err)), 0);
			assert_true(in.stable);
			for (unsigned i = 0; i < 3; i++) {
				assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
				assert_false(in.eof);
				uint64_t frac = nsec ? recs[i].frac : recs[i].frac * 1000ull;
				assert_int_equal(in.t, recs[i].sec * 1000000000ull + frac);
				assert_int_equal(in.len, recs[i].caplen);
				for (uint32_t b = 0; b < in.len; b++)
					assert_int_equal(in.data[b], recs[i].fill);
			}
			/* read in place: the first frames' bytes are still there after the last read */
			assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
			assert_true(in.eof);
			rp_cap_close(&in);
			char e[256];
			assert_int_equal(same_as_libpcap(path, 1, e, sizeof(e)), 3);
			assert_string_equal(e, "");
			unlink(path);
			free(path);
		}
}

static void libpcap_reads_on(void **state)
{
	(void)state;
	char e[256];
	/* snap length 64: the second record (4170 bytes) is libpcap's to cut */
	char *path = write_pcap(0, 1, 64, 1, recs, 3, 0);
	assert_int_equal(same_as_libpcap(path, 1, e, sizeof(e)), 3);
	unlink(path);
	free(path);
	/* Ethernet with FCS bits in the link type: not walked, read by libpcap */
	path = write_pcap(0, 1, 65535, 1u | 0x10000000u | (4u << 26), recs, 3, 0);
	assert_int_equal(same_as_libpcap(path, 0, e, sizeof(e)), 3);
	unlink(path);
	free(path);
	/* cut in the second record's bytes, then in the third record's header */
	long second = 24 + 16 + 60 + 16 + 100;
	long third_hdr = 24 + 16 + 60 + 16 + 4170 + 7;
	for (int i = 0; i < 2; i++) {
		path = write_pcap(1, 0, 65535, 1, recs, 3, i ? third_hdr : second);
		assert_int_equal(same_as_libpcap(path, 1, e, sizeof(e)), 1 + i);
		assert_non_null(strstr(e, "truncated"));
		unlink(path);
		free(path);
	}
}

/* Blocks before the oldest frame still referenced go back; a frame still referenced keeps its
 * bytes, however many blocks are read after it; a record larger than a block is read whole. */
static void blocks_given_back(void **state)
{
	(void)state;
	enum { N = 200 };
	struct rec many[N];
	for (unsigned i = 0; i < N; i++)
		many[i] = (struct rec){i, 0, i == 150 ? 100000 : 4096, i == 150 ? 100000 : 4096,
				       (uint8_t)i};
	char *path = write_pcap(0, 1, 262144, 1, many, N, 0);
	struct cap_in in = {0};
	char err[256];
	assert_int_equal(rp_cap_open(&in, path, err, sizeof(err)), 0);
	assert_true(in.stable);
	const uint8_t *first = NULL;
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
		assert_int_equal(in.len, many[i].caplen);
		assert_int_equal(in.data[0], (uint8_t)i);
		assert_int_equal(in.data[in.len - 1], (uint8_t)i);
		if (i == 10)
			first = in.data;
		/* frame 10 held until frame 100: the file read so far stays */
		rp_cap_keep(&in, i >= 10 && i < 100 ? first : NULL);
		if (i >= 10 && i < 100) {
			assert_int_equal(first[0], 10);
			assert_int_equal(first[4095], 10);
			assert_true(in.walk.held >= (size_t)(i - 10) * (16 + 4096));
		} else {
			/* only the block of the frame read is left: 64 KiB, or the 100,016 bytes of
			 * frame 150's record from it on */
			assert_ptr_equal(in.walk.first, in.walk.last);
			assert_true(in.walk.held <= (i < 150 ? 65536u : 100016u));
		}
	}
	assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
	assert_true(in.eof);
	rp_cap_close(&in);
	unlink(path);
	free(path);
	/* a capture of no frame: no frame held, nothing to give back */
	path = write_pcap(0, 1, 65535, 1, many, 0, 0);
	assert_int_equal(rp_cap_open(&in, path, err, sizeof(err)), 0);
	assert_true(in.stable);
	assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
	assert_true(in.eof);
	rp_cap_keep(&in, NULL);
	rp_cap_keep(&in, (const uint8_t *)many); /* not of the walk's blocks */
	assert_int_equal(in.walk.held, 0);
	rp_cap_close(&in);
	unlink(path);
	free(path);
}

/* Resident KiB of the mapping holding p, as the kernel counts them (/proc/self/smaps, Rss). */
static long resident_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	int in = 0;
	long kb = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		/* a mapping's first line: "lo-hi perms ..."; its fields follow ("Rss:  8 kB") */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* Mapped as well: a frame's bytes lie in the mapping at its file offset; only the pages where
 * frames' bytes were read are mapped in, and a region where they were goes back once the
 * reader is past it and no frame holds its bytes, a held region at its last drop; the bytes
 * stay readable until close, even in a region gone back. */
static void mapped_regions_given_back(void **state)
{
	(void)state;
	enum { N = 1000 }; /* 4,112,024 bytes: four regions of 1 MiB and part of a fifth */
	struct rec many[N];
	for (unsigned i = 0; i < N; i++)
		many[i] = (struct rec){i, 0, 4096, 4096, (uint8_t)i};
	char *path = write_pcap(0, 1, 65535, 1, many, N, 0);
	struct cap_in in = {0};
	char err[256];
	assert_int_equal(rp_cap_open(&in, path, err, sizeof(err)), 0);
	assert_int_equal(rp_cap_map(&in), 0);
	assert_non_null(in.walk.map);
	const uint8_t *held[2] = {NULL, NULL};
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
		assert_int_equal(in.at, 24 + (uint64_t)i * (16 + 4096) + 16);
		const uint8_t *where = rp_cap_mapped(&in, in.at);
		assert_non_null(where);
		if (i == 10 || i == 600) { /* frames in flight hold their bytes past the headers */
			assert_memory_equal(where, in.data, 4096);
			held[i == 600] = where + 100;
			rp_cap_walk_hold(&in.walk, where + 100, 4096 - 100);
		}
		rp_cap_keep(&in, NULL);
	}
	/* the pages read there (and the kernel's fault-around of up to 64 KiB each): no more */
	long kb = resident_kb(in.walk.map);
	assert_true(kb >= 8 && kb <= 2 * 68);
	rp_cap_walk_drop(&in.walk, held[1], 4096 - 100); /* region 2 goes back */
	long kb1 = resident_kb(in.walk.map);
	assert_true(kb1 >= 4 && kb1 <= 68 && kb1 < kb);
	rp_cap_walk_drop(&in.walk, held[0], 4096 - 100);
	assert_int_equal(resident_kb(in.walk.map), 0);
	/* gone back, still the file's bytes */
	assert_int_equal(held[0][0], 10);
	assert_int_equal(held[1][3995], (uint8_t)600);
	assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
	assert_true(in.eof);
	rp_cap_close(&in);
	assert_null(in.walk.map);
	/* a capture libpcap reads (FCS bits in the link type) is not mapped */
	char *fcs = write_pcap(0, 1, 65535, 1u | 0x10000000u | (4u << 26), recs, 3, 0);
	assert_int_equal(rp_cap_open(&in, fcs, err, sizeof(err)), 0);
	assert_int_equal(rp_cap_map(&in), -1);
	assert_int_equal(rp_cap_read(&in, err, sizeof(err)), 0);
	assert_null(rp_cap_mapped(&in, in.at));
	rp_cap_close(&in);
	unlink(fcs);
	free(fcs);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_orders_and_precisions),
		cmocka_unit_test(libpcap_reads_on),
		cmocka_unit_test(blocks_given_back),
		cmocka_unit_test(mapped_regions_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
