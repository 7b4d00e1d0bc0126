/* Classic pcap files read in place (capture_map.h). The format: a 24-byte file header (magic,
 * version 2.4, time zone, sigfigs, snap length, link type) and records of a 16-byte header
 * (seconds, fraction, captured length, length on the wire) followed by the captured bytes, in
 * the byte order of the magic (draft-ietf-opsawg-pcap). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_map.h"

#define PCAP_FILE_HDR 24
#define PCAP_RECORD_HDR 16
#define MAGIC_USEC 0xa1b2c3d4u
#define MAGIC_NSEC 0xa1b23c4du
#define LINKTYPE_ETHERNET 1u
/* libpcap's largest capture length for Ethernet (MAXIMUM_SNAPLEN): it refuses records above */
#define PCAP_MAX_SNAPLEN 262144u

static uint32_t u32(const struct cap_map *m, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return m->swapped ? __builtin_bswap32(v) : v;
}

/* ---- a file cut short under the run ----
 * A mapped file truncated by another program while replay reads it faults (SIGBUS) where read
 * would have returned less: the run then ends with the file's name, not a crash. */
static struct {
	const uint8_t *base;
	size_t size;
	const char *path;
} *maps;
static size_t n_maps, cap_maps;
static size_t page = 4096;

static void say(const char *s)
{
	ssize_t w = write(STDERR_FILENO, s, strlen(s));
	(void)w;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	const uint8_t *a = si->si_addr;
	for (size_t i = 0; i < n_maps; i++)
		if (maps[i].base && a >= maps[i].base && a < maps[i].base + maps[i].size) {
			say("rocesw: ");
			say(maps[i].path);
			say(": input capture shrank while replay read it\n");
			_exit(1);
		}
	signal(sig, SIG_DFL); /* not ours: the fault happens again, as it would have */
}

static int remember(const struct cap_map *m)
{
	if (n_maps == cap_maps) {
		size_t cap = cap_maps ? 2 * cap_maps : 64;
		void *p = realloc(maps, cap * sizeof(*maps));
		if (!p)
			return -1;
		maps = p;
		cap_maps = cap;
	}
	if (!n_maps) {
		struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
	}
	maps[n_maps].base = m->base;
	maps[n_maps].size = m->size;
	maps[n_maps].path = m->path;
	n_maps++;
	return 0;
}

static void forget(const struct cap_map *m)
{
	for (size_t i = 0; i < n_maps; i++)
		if (maps[i].base == m->base)
			maps[i].base = NULL;
}

/* ---- the walk ---- */

void rp_cap_map(struct cap_map *m, int fd, const char *path)
{
	*m = (struct cap_map){.path = path};
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < PCAP_FILE_HDR || (uint64_t)st.st_size > SIZE_MAX)
		return;
	void *va = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (va == MAP_FAILED)
		return;
	const uint8_t *h = va;
	uint32_t magic;
	memcpy(&magic, h, sizeof(magic));
	m->swapped = magic == __builtin_bswap32(MAGIC_USEC) || magic == __builtin_bswap32(MAGIC_NSEC);
	uint32_t native = m->swapped ? __builtin_bswap32(magic) : magic;
	uint16_t major;
	memcpy(&major, h + 4, sizeof(major));
	if (m->swapped)
		major = __builtin_bswap16(major);
	/* the link type whole: bits above it (an FCS length) are libpcap's to read */
	if ((native != MAGIC_USEC && native != MAGIC_NSEC) || major != 2 ||
	    u32(m, h + 20) != LINKTYPE_ETHERNET) {
		munmap(va, (size_t)st.st_size);
		return;
	}
	m->base = h;
	m->size = (size_t)st.st_size;
	m->off = PCAP_FILE_HDR;
	m->nsec = native == MAGIC_NSEC;
	m->snaplen = u32(m, h + 16);
	/* libpcap reads a snap length of 0 or beyond its largest as its largest */
	if (!m->snaplen || m->snaplen > PCAP_MAX_SNAPLEN)
		m->snaplen = PCAP_MAX_SNAPLEN;
	madvise(va, m->size, MADV_SEQUENTIAL);
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (remember(m) < 0) {
		munmap(va, m->size);
		m->base = NULL;
	}
}

int rp_cap_map_next(struct cap_map *m, uint64_t *t, uint32_t *len, const uint8_t **data)
{
	size_t left = m->size - m->off;
	if (!left)
		return 0;
	if (left < PCAP_RECORD_HDR)
		return -1;
	const uint8_t *r = m->base + m->off;
	uint32_t caplen = u32(m, r + 8), wire = u32(m, r + 12);
	/* what libpcap cuts to the snap length, refuses, or finds cut short: its to read */
	if (caplen > m->snaplen || caplen > wire || caplen > left - PCAP_RECORD_HDR)
		return -1;
	uint64_t frac = u32(m, r + 4);
	*t = (uint64_t)u32(m, r) * 1000000000u + (m->nsec ? frac : frac * 1000u);
	*len = caplen;
	*data = r + PCAP_RECORD_HDR;
	m->off += PCAP_RECORD_HDR + caplen;
	return 1;
}

/* pages given back at a time: a system call per 32 frames of 4 KiB; at most this much more than
 * its pending frames stays mapped per capture (384 MB for 3,072 hosts at worst) */
#define DROP_STEP (128u << 10)

void rp_cap_map_drop(struct cap_map *m, const uint8_t *keep)
{
	/* a frame of this mapping, or none read yet (an empty capture): nothing to give back */
	if (!keep || keep < m->base || keep > m->base + m->size)
		return;
	size_t to = (size_t)(keep - m->base) & ~(page - 1);
	if (to < m->dropped + DROP_STEP)
		return;
	madvise((void *)(uintptr_t)(m->base + m->dropped), to - m->dropped, MADV_DONTNEED);
	m->dropped = to;
}

void rp_cap_unmap(struct cap_map *m)
{
	if (!m->base)
		return;
	forget(m);
	munmap((void *)(uintptr_t)m->base, m->size);
	m->base = NULL;
}
