/* Output files written whole or not at all (docs/testing.md "Full disks"): the data goes to a
 * temporary file beside the target (PATH.tmp.PID), is fsync()ed, then renamed over the target.
 * On any failure (a full disk: ENOSPC) the temporary is removed, the target is what it was
 * before, and err names the file and the reason. */
#ifndef RSW_WHOLE_FILE_H
#define RSW_WHOLE_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* mode as open(2)'s (the umask applies). */
int rsw_file_write_whole(const char *path, const void *data, size_t len, mode_t mode,
			 char *err, size_t errlen);
/* A JSON document, dumped with jansson's flags, mode 0666 less the umask. */
int rsw_json_write_whole(const json_t *j, const char *path, size_t flags, char *err,
			 size_t errlen);
/* A copy of file `from` (read whole, at most 512 MiB) at `to`; err says which side failed. */
int rsw_file_copy_whole(const char *from, const char *to, mode_t mode, char *err,
			size_t errlen);

#endif
