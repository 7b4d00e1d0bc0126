/* Replay's captures: the pcaps read (a host's or a direct input's frames) and written (what left
 * each port and host), with the --captures settings (docs/replay.md, "Captures"). A service the
 * engine and the nodes use; it calls nothing of theirs. */
#ifndef RSW_REPLAY_CAPTURE_H
#define RSW_REPLAY_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include <pcap/pcap.h>

#include "capture_walk.h"
#include "replay.h"

/* A capture being read: the frame held is valid until the next read, or with `stable` (read in
 * place, capture_walk.h, until a record the walk does not take) until rp_cap_keep says it is
 * no longer referenced, or the capture is closed. */
struct cap_in {
	pcap_t *p;
	struct cap_walk walk; /* fd -1: libpcap reads every record */
	const char *path;
	int eof;
	int stable;
	uint64_t t;
	uint32_t len;
	const uint8_t *data;
	uint64_t at; /* data's offset in the file (read in place), else UINT64_MAX */
};

/* The first capture the run could not write (a full disk): it ends the run, and every capture
 * left incomplete is removed. */
struct rp_write_error {
	int err;        /* errno, 0: none */
	char path[4096];
};

/* The run's captures written: their settings and what went wrong. */
struct rp_captures {
	struct rsw_replay_capture *cfg; /* NULL: capture everything */
	size_t buffer;                  /* bytes of each capture stream's buffer */
	struct rp_write_error werr;
	unsigned removed;               /* captures removed as incomplete */
};

/* One output capture: NULL dumper when this port or host is not captured. */
struct rp_cap {
	pcap_dumper_t *d;
	const struct rsw_replay_capture *cfg;
	uint64_t seen;  /* frames offered, for 1-in-N sampling */
	uint64_t bytes; /* bytes written (records and headers) */
	char *iobuf;    /* its stream's buffer (rp_captures.buffer) */
	uint64_t records;
	char *path;
	struct rp_write_error *werr; /* the run's */
};

/* Opens the capture at path to read (nanosecond times, Ethernet). */
int rp_cap_open(struct cap_in *in, const char *path, char *err, size_t errlen);
/* Maps the file as well (rp_cap_walk_map), where frames may keep their bytes past what packet
 * memory holds of them; 0, or -1 (not read in place, or not mapped). */
static inline int rp_cap_map(struct cap_in *in)
{
	return in->stable ? rp_cap_walk_map(&in->walk) : -1;
}
/* Where the frame read at file offset `at` lies in the mapping, or NULL. */
static inline const uint8_t *rp_cap_mapped(const struct cap_in *in, uint64_t at)
{
	return rp_cap_walk_mapped(&in->walk, at);
}
/* Frames of in read before `oldest` (NULL: before the one it holds) are no longer referenced. */
void rp_cap_keep(struct cap_in *in, const uint8_t *oldest);
/* Closes it; the frames it held are gone. */
void rp_cap_close(struct cap_in *in);
/* Reads the next frame of a capture. Returns 0 (a frame, or its end), or -1 on a read error,
 * which ends it (the reason in err unless NULL). */
int rp_cap_read(struct cap_in *in, char *err, size_t errlen);

/* The run's captures with these settings: their --capture-filter expression compiled as
 * tcpdump would. */
int rp_captures_init(struct rp_captures *cs, struct rsw_replay_capture *cfg, char *err,
		     size_t errlen);
void rp_captures_done(struct rp_captures *cs);
/* Each capture stream's buffer when the run may open this many files. */
size_t rp_capture_buffer(size_t files);
/* Opens the capture `name` (a host, a port, or SWITCH|PORT) at path, unless the settings leave
 * it out (then out->d stays NULL). */
int rp_capture_open(struct rp_captures *cs, const char *name, const char *path,
		    struct rp_cap *out, char *err, size_t errlen);
/* Closes a capture, adding it to what the run wrote; one that is not whole (a write failed, or
 * the run stopped at a write error) is removed, never left as if complete. */
void rp_capture_close(struct rp_captures *cs, struct rp_cap *c);
/* Records a frame of len bytes that departs at t in capture c, as c's settings select (window,
 * sampling, filter, snap length); its packet memory holds its first held bytes (data), and its
 * bytes from held on are at rest, or not held at all (NULL: its records stop at held). A
 * capture with a filter gets no rest (the filter reads the frame in one piece). */
void rp_write(struct rp_cap *c, uint64_t t, const uint8_t *data, uint32_t held,
	      const uint8_t *rest, uint32_t len);

#endif
