/* `rocesw hash explain`'s document (dataplane/pipeline/trace_explain.h) on stdout. */
#ifndef RSW_HASH_EXPLAIN_PRINT_H
#define RSW_HASH_EXPLAIN_PRINT_H

#include <jansson.h>

/* The document as text (or, with json, as it is) on stdout. */
void rsw_hash_explain_print(json_t *r, int json);

#endif
