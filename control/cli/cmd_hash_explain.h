/* `rocesw hash explain`'s views of a switch's decision for one packet (the document of
 * dataplane/pipeline/trace_explain.h), live or from a capture. */
#ifndef RSW_CMD_HASH_EXPLAIN_H
#define RSW_CMD_HASH_EXPLAIN_H

#include <jansson.h>

/* --config: frame frame_no of pcap through the switch config's tables. Exit status. */
int rsw_hash_explain_switch(const char *config, const char *pcap, unsigned frame_no,
			    const char *in_name, int json);

#endif
