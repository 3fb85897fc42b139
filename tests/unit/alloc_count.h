/* tests/unit/alloc_count.h: n_allocs counts every malloc, calloc and realloc call of the test
 * program and the project's static libraries, through the linker's --wrap (tests/CMakeLists.txt
 * adds -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc to the programs that include this), so a
 * test can prove a per-packet path allocates nothing. Include it in one file per program. */
#ifndef TESTS_UNIT_ALLOC_COUNT_H
#define TESTS_UNIT_ALLOC_COUNT_H

#include <stddef.h>

static unsigned long n_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    n_allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    n_allocs++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    n_allocs++;
    return __real_realloc(p, n);
}

#endif /* TESTS_UNIT_ALLOC_COUNT_H */
