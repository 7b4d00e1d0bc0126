/* The YAML config compiler: a switch config in SONiC CONFIG_DB vocabulary → table writes.
 * docs/config.md documents every table and field. */
#ifndef RSW_CONFIG_H
#define RSW_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "dataplane/tables/switch.h"

struct rsw_config_opts {
	/* 1: a SONiC config_db.json (tables and fields rocesw does not model are warnings);
	 * 0: a rocesw file (they are errors); -1: detect (a JSON object naming CONFIG_DB tables) */
	int sonic;
	FILE *warnings; /* "FILE:LINE: warning: ..." lines, each once; NULL drops them */
};

/* Compile path into writes appended to txn (nothing is applied). Returns -1 with every error,
 * one a line, "FILE:LINE: TABLE|KEY: field: what was expected", in err. */
int rsw_config_compile(const char *path, struct rsw_txn *txn, char *err, size_t errlen);
/* The same for the file open on fd (see ydoc_load_fd: a regular file, read into memory, never
 * reopened by name); name is used in messages only. With fd < 0, name is opened as a path. */
int rsw_config_compile_fd(int fd, const char *name, struct rsw_txn *txn, char *err, size_t errlen);

/* Only the hash policies of a file (SWITCH_HASH|GLOBAL as "default", and HASH_POLICY): writes
 * to RSW_T_HASH_POLICY appended to txn. Any other table is checked by name and ignored, so a
 * whole switch config or a file of policies both work. */
int rsw_config_hash_policies(const char *path, struct rsw_txn *txn, char *err, size_t errlen);

/* Either of the above with options (NULL: detect SONiC, drop warnings). */
int rsw_config_compile_opts(int fd, const char *name, const struct rsw_config_opts *o,
			    struct rsw_txn *txn, char *err, size_t errlen);

/* Compile and commit in one transaction. */
int rsw_config_apply(struct rsw_switch *sw, const char *path, char *err, size_t errlen);
int rsw_config_apply_opts(struct rsw_switch *sw, const char *path,
			  const struct rsw_config_opts *o, char *err, size_t errlen);

#endif
