/* Classic pcap files read in place (capture_walk.h). The format: a 24-byte file header (magic,
 * version 2.4, time zone, sigfigs, snap length, link type) and records of a 16-byte header
 * (seconds, fraction, captured length, length on the wire) followed by the captured bytes, in
 * the byte order of the magic (draft-ietf-opsawg-pcap). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_walk.h"

#define PCAP_FILE_HDR 24
#define PCAP_RECORD_HDR 16
#define MAGIC_USEC 0xa1b2c3d4u
#define MAGIC_NSEC 0xa1b23c4du
#define LINKTYPE_ETHERNET 1u
/* libpcap's largest capture length for Ethernet (MAXIMUM_SNAPLEN): it refuses records above */
#define PCAP_MAX_SNAPLEN 262144u
/* a block's room: a system call per 15 frames of 4 KiB, about half a frame read twice (the
 * record a block cuts), and at most this much more than its pending frames held per capture
 * (192 MiB for 3,072 hosts); a larger record gets a block of its size */
#define BLOCK_SIZE (64u << 10)

static uint32_t u32(const struct cap_walk *w, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return w->swapped ? __builtin_bswap32(v) : v;
}

/* Reads [at, at + n) of the file into buf (less at its end); the bytes read, or -1. */
static ssize_t read_at(int fd, uint8_t *buf, size_t n, uint64_t at)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

void rp_cap_walk_open(struct cap_walk *w, int fd, const char *path)
{
	*w = (struct cap_walk){.fd = -1, .path = path};
	struct stat st;
	uint8_t h[PCAP_FILE_HDR];
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    read_at(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return;
	uint32_t magic;
	memcpy(&magic, h, sizeof(magic));
	w->swapped = magic == __builtin_bswap32(MAGIC_USEC) || magic == __builtin_bswap32(MAGIC_NSEC);
	uint32_t native = w->swapped ? __builtin_bswap32(magic) : magic;
	uint16_t major;
	memcpy(&major, h + 4, sizeof(major));
	if (w->swapped)
		major = __builtin_bswap16(major);
	/* the link type whole: bits above it (an FCS length) are libpcap's to read */
	if ((native != MAGIC_USEC && native != MAGIC_NSEC) || major != 2 ||
	    u32(w, h + 20) != LINKTYPE_ETHERNET)
		return;
	w->fd = fd;
	w->size = (uint64_t)st.st_size;
	w->off = PCAP_FILE_HDR;
	w->nsec = native == MAGIC_NSEC;
	w->snaplen = u32(w, h + 16);
	/* libpcap reads a snap length of 0 or beyond its largest as its largest */
	if (!w->snaplen || w->snaplen > PCAP_MAX_SNAPLEN)
		w->snaplen = PCAP_MAX_SNAPLEN;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

/* A new last block read from the next record on, holding at least `need` bytes: 0, or -1 when
 * there is no memory or the file holds less than that (it shrank under the run). */
static int read_block(struct cap_walk *w, size_t need)
{
	size_t size = need > BLOCK_SIZE ? need : BLOCK_SIZE;
	struct cap_block *b = w->spare;
	if (b && b->size >= size) {
		w->spare = NULL;
	} else {
		b = malloc(sizeof(*b) + size);
		if (!b)
			return -1;
		b->size = size;
	}
	uint64_t left = w->size - w->off;
	ssize_t got = read_at(w->fd, b->b, left < b->size ? (size_t)left : b->size, w->off);
	if (got < 0 || (size_t)got < need) {
		free(b);
		return -1;
	}
	b->next = NULL;
	b->at = w->off;
	b->len = (size_t)got;
	if (w->last)
		w->last->next = b;
	else
		w->first = b;
	w->last = b;
	w->held += b->size;
	return 0;
}

/* The n bytes at the next record, in the last block (read as needed), or NULL. */
static const uint8_t *record_bytes(struct cap_walk *w, size_t n)
{
	struct cap_block *b = w->last;
	if (!b || w->off + n > b->at + b->len) {
		if (read_block(w, n) < 0)
			return NULL;
		b = w->last;
	}
	return b->b + (w->off - b->at);
}

int rp_cap_walk_next(struct cap_walk *w, uint64_t *t, uint32_t *len, const uint8_t **data)
{
	uint64_t left = w->size - w->off;
	if (!left)
		return 0;
	if (left < PCAP_RECORD_HDR)
		return -1;
	const uint8_t *r = record_bytes(w, PCAP_RECORD_HDR);
	if (!r)
		return -1;
	uint32_t caplen = u32(w, r + 8), wire = u32(w, r + 12);
	/* what libpcap cuts to the snap length, refuses, or finds cut short: its to read */
	if (caplen > w->snaplen || caplen > wire || caplen > left - PCAP_RECORD_HDR)
		return -1;
	r = record_bytes(w, PCAP_RECORD_HDR + (size_t)caplen);
	if (!r)
		return -1;
	uint64_t frac = u32(w, r + 4);
	*t = (uint64_t)u32(w, r) * 1000000000u + (w->nsec ? frac : frac * 1000u);
	*len = caplen;
	*data = r + PCAP_RECORD_HDR;
	w->at = w->off + PCAP_RECORD_HDR;
	w->off += PCAP_RECORD_HDR + caplen;
	return 1;
}

static void give_back(struct cap_walk *w, struct cap_block *b)
{
	w->held -= b->size;
	if (w->spare && w->spare->size >= b->size) {
		free(b);
		return;
	}
	free(w->spare);
	w->spare = b;
}

#define HELD_ONCE (1u << 31)

/* Region i, where frames held bytes but none does now, goes back. */
static void region_give_back(struct cap_walk *w, uint64_t i)
{
	w->holds[i] = 0;
	uint64_t at = i * RP_CAP_REGION;
	uint64_t n = w->size - at < RP_CAP_REGION ? w->size - at : RP_CAP_REGION;
	/* a file mapping's pages: the process lets go of them; the file keeps its bytes */
	madvise((void *)(uintptr_t)(w->map + at), n, MADV_DONTNEED);
}

int rp_cap_walk_map(struct cap_walk *w)
{
	if (w->fd < 0 || w->map || !w->size)
		return -1;
	uint64_t regions = (w->size + RP_CAP_REGION - 1) / RP_CAP_REGION;
	w->holds = calloc(regions, sizeof(*w->holds));
	void *m = w->holds ? mmap(NULL, w->size, PROT_READ, MAP_SHARED, w->fd, 0) : MAP_FAILED;
	if (m == MAP_FAILED) {
		free(w->holds);
		w->holds = NULL;
		return -1;
	}
	w->map = m;
	return 0;
}

void rp_cap_walk_hold(struct cap_walk *w, const uint8_t *p, uint32_t n)
{
	uint64_t at = (uint64_t)(p - w->map);
	uint64_t first = at / RP_CAP_REGION, last = (at + n - 1) / RP_CAP_REGION;
	for (uint64_t i = first; i <= last; i++) /* frames are shorter than a region */
		w->holds[i] = (w->holds[i] + 1) | HELD_ONCE;
}

void rp_cap_walk_drop(struct cap_walk *w, const uint8_t *p, uint32_t n)
{
	uint64_t at = (uint64_t)(p - w->map);
	uint64_t first = at / RP_CAP_REGION, last = (at + n - 1) / RP_CAP_REGION;
	for (uint64_t i = first; i <= last; i++)
		if (--w->holds[i] == HELD_ONCE && i < w->passed)
			region_give_back(w, i);
}

/* The reader keeps no frame before file offset `kept`: the regions before its own that no
 * frame holds go back; a held one, at its last drop. */
static void keep_mapped(struct cap_walk *w, uint64_t kept)
{
	for (; w->passed < kept / RP_CAP_REGION; w->passed++)
		if (w->holds[w->passed] == HELD_ONCE)
			region_give_back(w, w->passed);
}

void rp_cap_walk_keep(struct cap_walk *w, const uint8_t *keep)
{
	/* a frame of this walk's blocks, or none read yet: nothing to give back */
	uintptr_t k = (uintptr_t)keep;
	struct cap_block *b = w->first;
	while (b && !(k >= (uintptr_t)b->b && k < (uintptr_t)b->b + b->len))
		b = b->next;
	if (!b)
		return;
	if (w->map)
		keep_mapped(w, b->at + (uint64_t)(k - (uintptr_t)b->b));
	while (w->first != b) {
		struct cap_block *old = w->first;
		w->first = old->next;
		give_back(w, old);
	}
}

void rp_cap_walk_close(struct cap_walk *w)
{
	while (w->first) {
		struct cap_block *b = w->first;
		w->first = b->next;
		free(b);
	}
	free(w->spare);
	if (w->map)
		munmap((void *)(uintptr_t)w->map, w->size);
	free(w->holds);
	w->map = NULL;
	w->holds = NULL;
	w->last = w->spare = NULL;
	w->held = 0;
	w->fd = -1;
}
