/* Loads the PFC-watching XDP program with libbpf from the object embedded at build time. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "hostsend/pfc_xdp_load.h"
#include "pfc_xdp_obj.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings reach the user as our own messages; its debug chatter does not */
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int rsw_pfc_xdp_open(struct rsw_pfc_xdp *x, unsigned link_mbps, char *err, size_t errlen)
{
	memset(x, 0, sizeof(*x));
	x->prog_fd = -1;
	libbpf_set_print(quiet);
	x->obj = bpf_object__open_mem(rsw_pfc_xdp_obj, sizeof(rsw_pfc_xdp_obj), NULL);
	if (!x->obj) {
		snprintf(err, errlen, "cannot open the XDP program: %s", strerror(errno));
		return -1;
	}
	if (bpf_object__load(x->obj)) {
		snprintf(err, errlen, "cannot load the XDP program (needs root or CAP_BPF): %s",
			 strerror(errno));
		goto fail;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(x->obj, "rsw_pfc_xdp");
	struct bpf_map *map = bpf_object__find_map_by_name(x->obj, "rsw_pfc_state");
	if (!prog || !map) {
		snprintf(err, errlen, "the XDP object lacks rsw_pfc_xdp or rsw_pfc_state");
		goto fail;
	}
	x->prog_fd = bpf_program__fd(prog);
	size_t len = (sizeof(struct rsw_pfc_xdp_state) + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "cannot map the PFC state: %s", strerror(errno));
		goto fail;
	}
	x->state = m;
	x->state->link_mbps = link_mbps;
	return 0;
fail:
	bpf_object__close(x->obj);
	x->obj = NULL;
	return -1;
}

int rsw_pfc_xdp_attach(struct rsw_pfc_xdp *x, int ifindex, const char *mode, char *err,
		       size_t errlen)
{
	static const struct { const char *name; unsigned flags; } modes[] = {
		{"native", XDP_FLAGS_DRV_MODE}, {"skb", XDP_FLAGS_SKB_MODE}};
	char first[256] = "";

	for (unsigned i = 0; i < 2; i++) {
		if (strcmp(mode, "auto") && strcmp(mode, modes[i].name))
			continue;
		unsigned flags = modes[i].flags | XDP_FLAGS_UPDATE_IF_NOEXIST;
		int rc = bpf_xdp_attach(ifindex, x->prog_fd, flags, NULL);
		if (rc == 0) {
			x->ifindex = ifindex;
			x->xdp_flags = flags;
			return 0;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s mode: %s", modes[i].name, strerror(-rc));
		else
			snprintf(err, errlen, "cannot attach the XDP program (%s; %s mode: %s)%s", first,
				 modes[i].name, strerror(-rc),
				 rc == -EBUSY || rc == -EEXIST
					 ? ": another XDP program is attached (ip link set dev IF xdp off "
					   "removes it)"
					 : "");
	}
	if (strcmp(mode, "auto"))
		snprintf(err, errlen, "cannot attach the XDP program (%s)", first);
	return -1;
}

void rsw_pfc_xdp_close(struct rsw_pfc_xdp *x)
{
	if (x->ifindex) {
		/* only if it is still ours */
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = x->prog_fd);
		bpf_xdp_detach(x->ifindex,
			       (x->xdp_flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST) | XDP_FLAGS_REPLACE, &opts);
	}
	x->ifindex = 0;
	if (x->state)
		munmap((void *)x->state, (sizeof(struct rsw_pfc_xdp_state) + 4095) & ~(size_t)4095);
	x->state = NULL;
	if (x->obj)
		bpf_object__close(x->obj);
	x->obj = NULL;
}

const char *rsw_pfc_xdp_libbpf_version(void)
{
	return libbpf_version_string();
}
