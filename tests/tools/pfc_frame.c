/* Test helper: prints in hex the PFC frame the switch builds (rsw_pfc_build) for a source MAC,
 * class-enable vector and eight times. Usage: pfc_frame MAC ENABLE T0 .. T7 */
#include <stdio.h>
#include <stdlib.h>

#include "dataplane/pkt/pkt_meta.h"
#include "dataplane/tables/table_types.h"
#include "dataplane/tm/pfc.h"

int main(int argc, char **argv)
{
	uint8_t mac[6], f[RSW_PFC_FRAME_LEN];
	uint16_t t[8];
	if (argc != 11 || rsw_mac_parse(argv[1], mac) != 0) {
		fprintf(stderr, "usage: pfc_frame MAC ENABLE T0 T1 T2 T3 T4 T5 T6 T7\n");
		return 2;
	}
	for (int i = 0; i < 8; i++)
		t[i] = (uint16_t)strtoul(argv[3 + i], NULL, 0);
	unsigned n = rsw_pfc_build(f, mac, (uint8_t)strtoul(argv[2], NULL, 0), t);
	for (unsigned i = 0; i < n; i++)
		printf("%02x", f[i]);
	printf("\n");
	return 0;
}
