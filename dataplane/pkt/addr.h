/* IP addresses, prefixes and MAC addresses as tables, configs and control requests name them: one
 * parser and printer of each, so an address has one spelling everywhere. */
#ifndef RSW_ADDR_H
#define RSW_ADDR_H

#include <stdint.h>

struct rsw_ip {
	uint8_t family; /* 4 or 6 */
	uint8_t a[16];  /* network order; IPv4 in the first 4 bytes */
};

struct rsw_prefix {
	struct rsw_ip ip;
	uint8_t len;
};

int rsw_ip_parse(const char *s, struct rsw_ip *ip);
/* "ADDR/LEN", strictly: inet_pton's address, LEN in plain decimal (no sign, space or leading
 * zero) within the family's width. 0, -1 if malformed, -2 if host bits are set. The one prefix
 * parser of configs and control requests. */
int rsw_prefix_parse(const char *s, struct rsw_prefix *p);
const char *rsw_ip_str(const struct rsw_ip *ip, char *buf, unsigned len);
int rsw_ip_eq(const struct rsw_ip *a, const struct rsw_ip *b);
/* 1 if ip is inside the subnet of p (same family, the first p->len bits equal). */
int rsw_prefix_contains(const struct rsw_prefix *p, const struct rsw_ip *ip);
int rsw_mac_parse(const char *s, uint8_t mac[6]);

#endif
