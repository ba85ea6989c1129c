// Counts heap allocations by defining the C allocator's entry points in the benchmark program itself. The dynamic
// linker resolves `malloc` and the rest to the first definition in its search order, which is the executable's, so
// every library (the Swift runtime, Foundation, OpenSSL, zlib) calls these; each counts and forwards to glibc's
// own implementation under its internal name (`__libc_malloc` and so on: exported by glibc for exactly this use).
// This is benchmark code: no product of farecheck links it.

#define _GNU_SOURCE
#include "CAllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

// Per thread, so that a figure counts the measuring thread's allocations and not a runtime thread's. Initial-exec
// TLS in the executable is reached without a call (and without allocating), so it is safe inside malloc.
static _Thread_local uint64_t CAllocationCounter_thread;
static _Atomic uint64_t CAllocationCounter_process;

// Read through a volatile access: the compiler takes glibc's functions (strdup) for ones that cannot touch this
// file's variables, and would otherwise keep a value read before the call.
static inline uint64_t CAllocationCounter_readThread(void) { return *(volatile uint64_t *)&CAllocationCounter_thread; }

static inline void CAllocationCounter_count(void) {
    CAllocationCounter_thread += 1;
    atomic_fetch_add_explicit(&CAllocationCounter_process, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    CAllocationCounter_count();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    CAllocationCounter_count();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    // realloc(NULL, n) is an allocation; growing or moving an existing block is counted too, as a call that may
    // copy, the way allocation-counting tools (heaptrack, jemalloc's stats) count it.
    CAllocationCounter_count();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    CAllocationCounter_count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    CAllocationCounter_count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // glibc's own checks: a power of two that is a multiple of sizeof(void *).
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    CAllocationCounter_count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    CAllocationCounter_count();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    CAllocationCounter_count();
    return __libc_pvalloc(size);
}

uint64_t CAllocationCounter_threadAllocations(void) { return CAllocationCounter_readThread(); }

uint64_t CAllocationCounter_processAllocations(void) {
    return atomic_load_explicit(&CAllocationCounter_process, memory_order_relaxed);
}

int CAllocationCounter_isInterposed(void) {
    // Volatile both ways, so that the compiler can neither see the text nor drop the copy as unused.
    static const char *volatile source = "farecheck";
    static char *volatile copy;
    uint64_t before = CAllocationCounter_readThread();
    // strdup allocates inside glibc, through the dynamic symbol `malloc`: counted only if ours is the one in use.
    copy = strdup(source);
    uint64_t after = CAllocationCounter_readThread();
    free(copy);
    return after == before + 1;
}
