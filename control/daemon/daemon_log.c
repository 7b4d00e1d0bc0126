#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_log.h"

static int g_syslog;
static const char *g_ident = "roceswd";

void rsw_log_open(const char *ident, int use_syslog)
{
	g_ident = ident;
	g_syslog = use_syslog;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

static const char *level(int priority)
{
	switch (priority) {
	case LOG_ERR: return "error";
	case LOG_WARNING: return "warning";
	case LOG_NOTICE: return "notice";
	default: return "info";
	}
}

void rsw_log(int priority, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' '; /* one record, one line */
	if (g_syslog) {
		syslog(priority, "%s", msg);
		return;
	}
	struct timespec ts;
	struct tm tmv;
	char when[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tmv);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tmv);
	fprintf(stderr, "%s.%03ldZ %s[%d]: %s: %s\n", when, ts.tv_nsec / 1000000, g_ident,
		(int)getpid(), level(priority), msg);
	fflush(stderr);
}
