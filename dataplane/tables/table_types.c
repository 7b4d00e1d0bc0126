#include <string.h>

#include "table_types.h"

static const char *const role_names[RSW_ROLE_COUNT] = {"host", "uplink", "downlink"};

const char *rsw_port_role_name(unsigned role)
{
	return role < RSW_ROLE_COUNT ? role_names[role] : "?";
}

unsigned rsw_port_role_from_name(const char *s)
{
	for (unsigned i = 0; i < RSW_ROLE_COUNT; i++)
		if (strcmp(s, role_names[i]) == 0)
			return i;
	return RSW_ROLE_COUNT;
}
