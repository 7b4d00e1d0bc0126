/* Values one thread writes while others read them: a worker's counters, a port owner's queue
 * and PFC statistics, read by the main lcore (control socket, stats) and DPDK's telemetry thread.
 * Stored and loaded atomically with relaxed order: the same instructions as plain accesses on
 * x86-64 and arm64, but no data race (C11 5.1.2.4) and never a torn value. Each value is read on
 * its own, not as a snapshot of several. */
#ifndef RSW_TM_COUNTER_H
#define RSW_TM_COUNTER_H

/* the one writer's update */
#define RSW_CNT_SET(lv, v) __atomic_store_n(&(lv), (v), __ATOMIC_RELAXED)
#define RSW_CNT_ADD(lv, v) RSW_CNT_SET(lv, (lv) + (v))
/* anyone's read */
#define RSW_CNT_GET(lv) __atomic_load_n(&(lv), __ATOMIC_RELAXED)

#endif
