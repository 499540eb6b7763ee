/* tests/gpu/loop_check.h - what the loops' GPU checks (bcgsloop_check, cgloop_check) share: their ok/FAIL lines and a
   failed CUDA call ending the program with cgloop's message. */
#ifndef LOOP_CHECK_H
#define LOOP_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "cgloop.h"

static int g_fail = 0;
static void check(bool ok, const char *what)
{
  if (!ok) g_fail++;
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
}
#define CU(call) \
  do { \
    int e_ = (int)(call); \
    if (e_) { \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cgloop_cuda_error(e_)); \
      exit(2); \
    } \
  } while (0)
#endif
