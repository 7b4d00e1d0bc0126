/* Fuzz targets: each takes arbitrary bytes and must neither crash, read out of bounds, leak nor
 * hit undefined behaviour (run under AddressSanitizer + UBSan by fuzz_driver.c). */
#ifndef RSW_FUZZ_TARGETS_H
#define RSW_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* A frame through the parser, then what the pipeline does with a parsed frame without tables:
 * hash keys of several policies, ICRC check, TTL and ECN rewrites. */
int rsw_fuzz_frame(const uint8_t *data, size_t size);
/* A file through the config compiler and the table build (what check-config does). */
int rsw_fuzz_config(const uint8_t *data, size_t size);

#endif
