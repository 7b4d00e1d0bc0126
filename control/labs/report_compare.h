/* `rocesw report compare`: several replay runs on one page, each kind of chart side by side on
 * shared axes (the same time range and the same y maximum), the overview as one table. */
#ifndef RSW_REPORT_COMPARE_H
#define RSW_REPORT_COMPARE_H

#include <stddef.h>

/* names[i] labels dirs[i]. Returns -1 with a message. */
int rsw_report_compare(const char *const *dirs, const char *const *names, unsigned n,
		       const char *path, char *err, size_t errlen);

#endif
