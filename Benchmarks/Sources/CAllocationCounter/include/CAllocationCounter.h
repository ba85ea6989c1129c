#ifndef C_ALLOCATION_COUNTER_H
#define C_ALLOCATION_COUNTER_H

#include <stdint.h>

/// Heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc) made by
/// the calling thread since it started, counted by this program's own definitions of those functions.
uint64_t CAllocationCounter_threadAllocations(void);

/// Heap allocations made by every thread of this process since it started.
uint64_t CAllocationCounter_processAllocations(void);

/// Whether this program's allocator definitions are the ones the process uses: 1 when a `malloc` made by the C
/// library on our behalf (`strdup`) was counted, 0 when the count did not move (the counts then mean nothing).
int CAllocationCounter_isInterposed(void);

#endif
