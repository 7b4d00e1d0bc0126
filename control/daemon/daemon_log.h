/* One-line log records of roceswd: to stderr with a UTC timestamp, or to syslog (LOG_DAEMON). */
#ifndef RSW_DAEMON_LOG_H
#define RSW_DAEMON_LOG_H

#include <syslog.h>

void rsw_log_open(const char *ident, int use_syslog);
void rsw_log(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
