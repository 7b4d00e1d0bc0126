#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"

int rsw_ip_parse(const char *s, struct rsw_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, s, ip->a) == 1) {
		ip->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip->a) == 1) {
		ip->family = 6;
		return 0;
	}
	return -1;
}

int rsw_prefix_parse(const char *s, struct rsw_prefix *p)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = 0;
	if (rsw_ip_parse(buf, &p->ip) < 0)
		return -1;
	/* the length is plain decimal: no sign, space or leading zero (strtol would take " 8",
	 * "+8" and "016"), so a prefix has one spelling in configs, requests and replies */
	const char *d = slash + 1;
	size_t nd = strspn(d, "0123456789");
	if (nd == 0 || nd > 3 || d[nd] || (nd > 1 && d[0] == '0'))
		return -1;
	long len = strtol(d, NULL, 10);
	if (len > (p->ip.family == 4 ? 32 : 128))
		return -1;
	p->len = (uint8_t)len;
	/* host bits must be zero, as `ip route` and SONiC require */
	for (unsigned bit = (unsigned)len; bit < (p->ip.family == 4 ? 32u : 128u); bit++)
		if (p->ip.a[bit / 8] & (0x80 >> (bit % 8)))
			return -2;
	return 0;
}

const char *rsw_ip_str(const struct rsw_ip *ip, char *buf, unsigned len)
{
	if (!inet_ntop(ip->family == 6 ? AF_INET6 : AF_INET, ip->a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

int rsw_ip_eq(const struct rsw_ip *a, const struct rsw_ip *b)
{
	return a->family == b->family && memcmp(a->a, b->a, a->family == 4 ? 4 : 16) == 0;
}

int rsw_prefix_contains(const struct rsw_prefix *p, const struct rsw_ip *ip)
{
	if (p->ip.family != ip->family)
		return 0;
	unsigned full = p->len / 8u, rest = p->len % 8u;
	if (memcmp(p->ip.a, ip->a, full))
		return 0;
	return !rest || !((p->ip.a[full] ^ ip->a[full]) & (uint8_t)(0xFF00 >> rest));
}

int rsw_mac_parse(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}
