#include <sys/mman.h>

#include "sparse_mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define RSW_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSW_LSAN 1
#endif
#endif
#ifdef RSW_LSAN
#include <sanitizer/lsan_interface.h>
#endif

void *rsw_sparse_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE); /* advice: where THP is "never", nothing to undo */
#ifdef RSW_LSAN
	__lsan_register_root_region(p, len);
#endif
	return p;
}

void rsw_sparse_free(void *p, size_t len)
{
	if (!p)
		return;
#ifdef RSW_LSAN
	__lsan_unregister_root_region(p, len);
#endif
	munmap(p, len);
}
