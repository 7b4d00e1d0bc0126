#include <string.h>

#include "drop_reason.h"

static const char *const names[RSW_DROP_COUNT] = {
	[RSW_DROP_NONE] = "none",
#define RSW_X(e, s) [RSW_DROP_##e] = s,
	RSW_DROP_REASONS(RSW_X)
#undef RSW_X
};

const char *rsw_drop_reason_name(unsigned reason)
{
	return reason < RSW_DROP_COUNT ? names[reason] : "unknown";
}

unsigned rsw_drop_reason_from_name(const char *name)
{
	for (unsigned i = 0; i < RSW_DROP_COUNT; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return RSW_DROP_COUNT;
}
