// bluejay-ct's clock: the x86 time-stamp counter, which Swift cannot read by itself (no
// intrinsic, no inline assembly), and CLOCK_MONOTONIC_RAW in nanoseconds on other machines.
// Out-of-line functions on purpose: a call the optimiser cannot see into is a fence it
// cannot move the measured operation across.
#ifndef CYCLE_COUNTER_H
#define CYCLE_COUNTER_H

#include <stdint.h>

/// The counter, read once every earlier instruction has completed (lfence; rdtsc; lfence).
uint64_t ct_counter_start(void);

/// The counter, read once the measured operation has completed (lfence; rdtsc; lfence).
uint64_t ct_counter_stop(void);

/// What the counter counts, for the report: "rdtsc" or "CLOCK_MONOTONIC_RAW ns".
const char *ct_counter_name(void);

#endif
