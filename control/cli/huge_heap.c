/* A zone's replay reads its tables, queues, links and flows at random across hundreds of
 * megabytes: on 4 KiB pages a third of a hop's cost at 208 switches was page walks (there a
 * hop cost 2.9x one of a 6-switch zone; docs/performance.md). glibc backs its heap with transparent
 * huge pages under the tunable glibc.malloc.hugetlb=1 (madvise on every mapping it takes from
 * the kernel), which it reads only when a program starts: so the command starts itself again
 * with it, once, before it has done anything. Not when the kernel's THP is "never", when
 * GLIBC_TUNABLES already says how malloc uses huge pages, under valgrind (it would run the new
 * image outside itself) or with ROCESW_HUGE_HEAP=0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "huge_heap.h"

#define TUNABLE "glibc.malloc.hugetlb=1"

static int thp_usable(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && !strstr(buf, "[never]");
	fclose(f);
	return ok;
}

static int under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");
	return p && strstr(p, "vgpreload");
}

void rsw_huge_heap(char **argv)
{
	const char *want = getenv("ROCESW_HUGE_HEAP"), *was = getenv("GLIBC_TUNABLES");
	if ((want && !strcmp(want, "0")) || (was && strstr(was, "glibc.malloc.hugetlb")) ||
	    under_valgrind() || !thp_usable())
		return;
	char self[4096], *t = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1); /* its name, not "exe" */
	if (n <= 0 || (size_t)n >= sizeof(self) - 1 ||
	    asprintf(&t, "%s%s" TUNABLE, was ? was : "", was && *was ? ":" : "") < 0)
		return;
	self[n] = '\0';
	if (setenv("GLIBC_TUNABLES", t, 1) == 0)
		execv(self, argv);
	/* no /proc, or the exec failed: the run goes on on small pages */
	if (was)
		setenv("GLIBC_TUNABLES", was, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	free(t);
}
