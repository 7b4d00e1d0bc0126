/* The check roceswd makes of a config (or a zone's switch config) before the dataplane sees it:
 * compiled and built into tables as the dataplane would, so what it refuses is refused here. */
#ifndef RSW_ROCESWD_VALIDATE_H
#define RSW_ROCESWD_VALIDATE_H

#include <stddef.h>

/* 0, or -1 with the reason in err; errors name the config `name`. */
int rsw_validate(const char *path, const char *name, char *err, size_t errlen);

#endif
