/* Replay's heap on transparent huge pages (huge_heap.c). */
#ifndef RSW_HUGE_HEAP_H
#define RSW_HUGE_HEAP_H

/* Runs the command again, once, as argv, with glibc's malloc on transparent huge pages; returns
 * (doing nothing) when that is already so, cannot be or is not wanted. */
void rsw_huge_heap(char **argv);

#endif
