/*
  ellr_timeline.h - CUDA events at marked points of a repeated piece of GPU work, and the time between two marks summed
  over the repetitions: a timeline where no profiler runs (the GPU machines have no usable Nsight Systems).  Each mark
  is recorded on the stream that runs the work it follows, so the time between marks on two streams shows how they
  overlap.  Recording costs a few microseconds of host time per mark; reading waits for the recorded work.
*/
#ifndef ELLR_TIMELINE_H
#define ELLR_TIMELINE_H

#include "ellr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ellr_timeline ellr_timeline;

/* nmarks marks per repetition, nsamples repetitions */
ellr_status ellr_timeline_create(int nmarks, int nsamples, ellr_timeline **tl);
/* mark k of the current repetition, on stream; nothing once nsamples repetitions are complete.  Never fails the work
   it marks: a failure is kept and reported by ellr_timeline_between() */
void        ellr_timeline_mark(ellr_timeline *tl, int k, void *stream);
/* the current repetition is complete; 1 when all nsamples are */
int         ellr_timeline_next(ellr_timeline *tl);
/* the repetitions complete so far */
int         ellr_timeline_count(const ellr_timeline *tl);
/* waits for the marks; the sum over the complete repetitions of the time from mark a to mark b in ms, each term
   max(0, .) where clamp is set (how long b came after a, where it did) */
ellr_status ellr_timeline_between(ellr_timeline *tl, int a, int b, int clamp, double *sum_ms);
void        ellr_timeline_destroy(ellr_timeline *tl);

#ifdef __cplusplus
}
#endif
#endif
