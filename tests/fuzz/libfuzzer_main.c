/* libFuzzer's entry points for one target of fuzz_targets.h, chosen at build time
 * (RSW_FUZZ_FRAME, RSW_FUZZ_CONFIG or RSW_FUZZ_CTL). Built with -Dfuzzing=true; run by
 * scripts/fuzz.sh. The ctl target acts on a switch built from RSW_FUZZ_CTL_CONFIG (environment),
 * else tests/configs/ecmp4.yaml. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_targets.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
#ifdef RSW_FUZZ_CTL
	const char *config = getenv("RSW_FUZZ_CTL_CONFIG");
	if (rsw_fuzz_ctl_init(config ? config : RSW_FUZZ_CTL_CONFIG) < 0) {
		fprintf(stderr, "fuzz_ctl: cannot build the switch the requests act on\n");
		exit(1);
	}
#endif
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(RSW_FUZZ_FRAME)
	rsw_fuzz_frame(data, size);
#elif defined(RSW_FUZZ_CONFIG)
	rsw_fuzz_config(data, size);
#elif defined(RSW_FUZZ_CTL)
	rsw_fuzz_ctl(data, size);
#else
#error "define RSW_FUZZ_FRAME, RSW_FUZZ_CONFIG or RSW_FUZZ_CTL"
#endif
	return 0;
}
