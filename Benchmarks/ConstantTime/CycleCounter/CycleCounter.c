// The clock of bluejay-ct (include/CycleCounter.h says why it is C). The time-stamp counter
// ticks at a constant rate on every x86-64 CPU Linux runs on today (constant_tsc), so its
// counts compare across the two classes of one run; that is all the t-test needs.
#include "CycleCounter.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

uint64_t ct_counter_start(void) {
    _mm_lfence();
    uint64_t now = __rdtsc();
    _mm_lfence();
    return now;
}

uint64_t ct_counter_stop(void) {
    _mm_lfence();
    uint64_t now = __rdtsc();
    _mm_lfence();
    return now;
}

const char *ct_counter_name(void) { return "rdtsc"; }

#else
#include <time.h>

/// CLOCK_MONOTONIC_RAW in nanoseconds: not slewed by NTP, fine-grained through the vDSO.
static uint64_t monotonic_raw_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t ct_counter_start(void) { return monotonic_raw_ns(); }
uint64_t ct_counter_stop(void) { return monotonic_raw_ns(); }
const char *ct_counter_name(void) { return "CLOCK_MONOTONIC_RAW ns"; }
#endif
