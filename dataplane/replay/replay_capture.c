/* Replay's captures read and written (replay_capture.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_capture.h"

/* the pcap file format's header sizes: file 24 bytes, record 16 (ts_sec, ts_frac, caplen, len) */
#define PCAP_FILE_HDR 24
#define PCAP_RECORD_HDR 16

/* A record as pcap_dump writes it (the file's byte order, 32-bit seconds and fraction), its
 * bytes in up to two pieces. */
static void dump(struct rp_cap *c, const struct pcap_pkthdr *h, const uint8_t *data, uint32_t n1,
		 const uint8_t *rest)
{
	uint32_t hdr[4] = {(uint32_t)h->ts.tv_sec, (uint32_t)h->ts.tv_usec, h->caplen, h->len};
	FILE *f = pcap_dump_file(c->d);
	fwrite(hdr, sizeof(hdr), 1, f);
	fwrite(data, n1, 1, f);
	if (h->caplen > n1)
		fwrite(rest, h->caplen - n1, 1, f);
}

void rp_write(struct rp_cap *c, uint64_t t, const uint8_t *data, uint32_t held,
	      const uint8_t *rest, uint32_t len)
{
	if (!c->d)
		return;
	const struct rsw_replay_capture *cfg = c->cfg;
	struct pcap_pkthdr h;
	h.ts.tv_sec = (time_t)(t / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000u); /* nanosecond file */
	h.caplen = rest ? len : held;
	h.len = len;
	if (cfg) {
		if (t < cfg->from_ns || (cfg->to_ns && t >= cfg->to_ns))
			return;
		if (cfg->filter && !pcap_offline_filter(&cfg->prog, &h, data))
			return;
		if (cfg->every > 1 && c->seen++ % cfg->every)
			return;
		if (cfg->snaplen && h.caplen > cfg->snaplen)
			h.caplen = cfg->snaplen;
	}
	dump(c, &h, data, h.caplen < held ? h.caplen : held, rest);
	c->bytes += PCAP_RECORD_HDR + h.caplen;
	/* a failed write goes unsaid until the stream is flushed: a look every 4096 records (a
	 * full disk ends the run then, not hours later) */
	if (!(++c->records & 4095) && fflush(pcap_dump_file(c->d)) != 0 && !c->werr->err) {
		c->werr->err = errno;
		snprintf(c->werr->path, sizeof(c->werr->path), "%s", c->path);
	}
}

int rp_cap_read(struct cap_in *in, char *err, size_t errlen)
{
	if (in->stable) {
		int rc = rp_cap_walk_next(&in->walk, &in->t, &in->len, &in->data);
		if (rc >= 0) {
			in->eof = !rc;
			in->at = in->walk.at;
			return 0;
		}
		/* a record the walk does not take: libpcap reads on from it, and says what it is */
		in->stable = 0;
		if (fseek(pcap_file(in->p), (long)in->walk.off, SEEK_SET) != 0) {
			in->eof = 1;
			if (err)
				snprintf(err, errlen, "%s: %s", in->path, strerror(errno));
			return -1;
		}
	}
	struct pcap_pkthdr *h;
	const u_char *d;
	int rc = pcap_next_ex(in->p, &h, &d);
	if (rc != 1) {
		in->eof = 1;
		if (rc == -2)
			return 0;
		if (err)
			snprintf(err, errlen, "%s: %s", in->path, pcap_geterr(in->p));
		return -1;
	}
	in->t = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec; /* opened in ns */
	in->at = UINT64_MAX;
	in->len = h->caplen;
	in->data = d;
	return 0;
}

int rp_cap_open(struct cap_in *in, const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE];
	in->path = path;
	in->p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!in->p) {
		/* libpcap names the file in some of its messages (one it cannot open) */
		int named = !strncmp(perr, path, strlen(path)) && perr[strlen(path)] == ':';
		snprintf(err, errlen, "%s%s%s", named ? "" : path, named ? "" : ": ", perr);
		return -1;
	}
	if (pcap_datalink(in->p) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: not an Ethernet capture", path);
		return -1;
	}
	rp_cap_walk_open(&in->walk, fileno(pcap_file(in->p)), path);
	in->stable = in->walk.fd >= 0;
	in->at = UINT64_MAX;
	return 0;
}

void rp_cap_keep(struct cap_in *in, const uint8_t *oldest)
{
	if (in->stable)
		rp_cap_walk_keep(&in->walk, oldest ? oldest : in->data);
}

void rp_cap_close(struct cap_in *in)
{
	if (in->p)
		pcap_close(in->p);
	in->p = NULL;
	rp_cap_walk_close(&in->walk);
}

int rp_captures_init(struct rp_captures *cs, struct rsw_replay_capture *cfg, char *err,
		     size_t errlen)
{
	*cs = (struct rp_captures){.cfg = cfg};
	if (!cfg)
		return 0;
	cfg->files = 0;
	cfg->bytes = 0;
	if (!cfg->filter)
		return 0;
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = pcap_compile(dead, &cfg->prog, cfg->filter, 1, PCAP_NETMASK_UNKNOWN);
	if (rc < 0)
		snprintf(err, errlen, "capture filter '%s': %s", cfg->filter, pcap_geterr(dead));
	pcap_close(dead);
	return rc;
}

void rp_captures_done(struct rp_captures *cs)
{
	if (cs->cfg && cs->cfg->filter)
		pcap_freecode(&cs->cfg->prog);
}

/* Each capture's stream buffer: large enough that a write(2) costs its bytes, not its call (256
 * KiB at most), and all of them together within the last-level cache (8 MiB over the files a
 * zone may open, 16 KiB at least each). A frame's copy into its buffer and the kernel's copy out
 * of it then stay in cache: with 1 MiB buffers over 256 files, both copies went to memory and
 * the fully captured run of bench/replay_ns3.sh's 1:1 zone took about 15 % more CPU. A buffer's
 * pages are touched only as its file is written. */
#define CAPTURE_BUFFERS_BUDGET (8u << 20)
#define CAPTURE_BUFFER_MAX (256u << 10)
#define CAPTURE_BUFFER_MIN (16u << 10)
size_t rp_capture_buffer(size_t files)
{
	size_t b = CAPTURE_BUFFERS_BUDGET / (files ? files : 1);
	if (b < CAPTURE_BUFFER_MIN)
		return CAPTURE_BUFFER_MIN;
	return b > CAPTURE_BUFFER_MAX ? CAPTURE_BUFFER_MAX : b;
}

/* Whether the settings keep the capture `name`. */
static int wanted(const struct rsw_replay_capture *cfg, const char *name)
{
	if (cfg && cfg->off)
		return 0;
	if (cfg && cfg->n_only) {
		unsigned k = 0;
		while (k < cfg->n_only && fnmatch(cfg->only[k], name, 0))
			k++;
		if (k == cfg->n_only)
			return 0;
	}
	return 1;
}

int rp_capture_open(struct rp_captures *cs, const char *name, const char *path,
		    struct rp_cap *out, char *err, size_t errlen)
{
	const struct rsw_replay_capture *cfg = cs->cfg;
	*out = (struct rp_cap){.cfg = cfg, .werr = &cs->werr};
	if (!wanted(cfg, name))
		return 0;
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, cfg && cfg->snaplen ? (int)cfg->snaplen : 65535, PCAP_TSTAMP_PRECISION_NANO);
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the stream gets a buffer of its own, set before its first write: stdio's default (one
	 * block, 4 KiB) made a write system call of about every frame */
	FILE *fp = fopen(path, "wb");
	out->iobuf = fp ? malloc(cs->buffer) : NULL;
	if (out->iobuf)
		setvbuf(fp, out->iobuf, _IOFBF, cs->buffer);
	/* only the run's thread writes it: pcap_dump's ferror and two fwrites a frame need not
	 * take the stream's lock (3 % of a fully captured run) */
	if (fp)
		__fsetlocking(fp, FSETLOCKING_BYCALLER);
	out->d = fp ? pcap_dump_fopen(dead, fp) : NULL;
	if (!out->d) {
		snprintf(err, errlen, "%s: %s", path, fp ? pcap_geterr(dead) : strerror(errno));
		if (fp)
			fclose(fp);
		free(out->iobuf);
		out->iobuf = NULL;
	}
	pcap_close(dead);
	out->path = out->d ? strdup(path) : NULL;
	if (out->d && !out->path) {
		pcap_dump_close(out->d);
		out->d = NULL;
		snprintf(err, errlen, "out of memory");
	}
	out->bytes = PCAP_FILE_HDR;
	return out->d ? 0 : -1;
}

void rp_capture_close(struct rp_captures *cs, struct rp_cap *c)
{
	if (!c->d)
		return;
	FILE *f = pcap_dump_file(c->d);
	/* no fsync: local file systems (ext4, xfs, tmpfs) refuse a write that has no room */
	int bad = fflush(f) != 0 || ferror(f);
	if (bad && !cs->werr.err) {
		cs->werr.err = errno ? errno : EIO;
		snprintf(cs->werr.path, sizeof(cs->werr.path), "%s", c->path);
	}
	pcap_dump_close(c->d);
	c->d = NULL;
	free(c->iobuf);
	c->iobuf = NULL;
	if (bad || cs->werr.err) {
		unlink(c->path);
		cs->removed++;
	} else if (cs->cfg) {
		cs->cfg->files++;
		cs->cfg->bytes += c->bytes;
	}
	free(c->path);
	c->path = NULL;
}
