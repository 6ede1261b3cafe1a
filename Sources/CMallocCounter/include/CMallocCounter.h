#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H
/// Heap allocations (malloc, calloc, realloc, aligned) made by the whole process so far.
/// Only linked into the benchmark executable, which this interposes malloc for.
unsigned long bench_allocation_count(void);
#endif
