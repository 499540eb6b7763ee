/* The engine's host allocations, through the host program's allocator when it installed one (ellr.h). */
#include <stdlib.h>
#include "ellr.h"

static ellr_host_allocator ellr_allocator; /* alloc == NULL: malloc and free */

void ellr_set_host_allocator(const ellr_host_allocator *a)
{
  if (a) ellr_allocator = *a;
  else memset(&ellr_allocator, 0, sizeof(ellr_allocator));
}

void *ellr_malloc(size_t bytes)
{
  if (!bytes) bytes = 1; /* a valid pointer for empty arrays, as the callers expect */
  return ellr_allocator.alloc ? ellr_allocator.alloc(bytes, 0, ellr_allocator.ctx) : malloc(bytes);
}

void *ellr_calloc(size_t count, size_t size)
{
  size_t bytes;
  if (size && count > SIZE_MAX / size) return NULL;
  bytes = count * size;
  if (!bytes) bytes = 1;
  return ellr_allocator.alloc ? ellr_allocator.alloc(bytes, 1, ellr_allocator.ctx) : calloc(bytes, 1);
}

void ellr_free(void *ptr)
{
  if (!ptr) return;
  if (ellr_allocator.release) ellr_allocator.release(ptr, ellr_allocator.ctx);
  else free(ptr);
}
