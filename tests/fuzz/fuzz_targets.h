/* Fuzz targets: each takes arbitrary bytes and must neither crash, read out of bounds, leak nor
 * hit undefined behaviour (run under AddressSanitizer + UBSan by fuzz_driver.c). */
#ifndef RSW_FUZZ_TARGETS_H
#define RSW_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* A frame through the parser, then what the pipeline does with a parsed frame without tables:
 * hash keys of several policies, ICRC check, TTL and ECN rewrites. Aborts if the parser's
 * RoCE fast path takes the frame and reads it otherwise than the full parser; returns 1 when
 * the fast path took it, else 0. */
int rsw_fuzz_frame(const uint8_t *data, size_t size);
/* A file through the config compiler and the table build (what check-config does). */
int rsw_fuzz_config(const uint8_t *data, size_t size);

/* A control-protocol request (docs/control.md) handled as the dataplane's main lcore would,
 * on a switch built from config by rsw_fuzz_ctl_init (which starts DPDK's EAL). Every refused
 * request must carry a message. */
int rsw_fuzz_ctl_init(const char *config);
/* 0: not a request with an op; 1: handled; 2: refused with a message. */
int rsw_fuzz_ctl(const uint8_t *data, size_t size);
void rsw_fuzz_ctl_fini(void);
/* A structural mutation of a JSON request in buf: keys removed, set to values of random kinds,
 * the op changed. Returns the new length (at most cap). */
size_t rsw_fuzz_ctl_mutate(uint8_t *buf, size_t len, size_t cap, uint64_t (*rnd)(void));

/* A frame through the pipeline of two switches built from config (rsw_fuzz_cache_init), one
 * keeping a flow cache: aborts unless both decide the same. Every few hundred frames both commit
 * the same table change. fini prints the cache's counts; -1 if it hardly answered. */
int rsw_fuzz_cache_init(const char *config);
int rsw_fuzz_cache(const uint8_t *data, size_t size);
int rsw_fuzz_cache_fini(void);

#endif
