/* ellr_timeline.cu - CUDA events at marked points of repeated GPU work (ellr_timeline.h). */
#include "ellr_timeline.h"
#include "ellr_cuda_util.cuh"

#include <stdlib.h>

struct ellr_timeline {
  int          nmarks, nsamples, done;
  int          failed; /* a mark could not be recorded */
  cudaEvent_t *ev; /* ev[s * nmarks + k]: mark k of repetition s */
};

ellr_status ellr_timeline_create(int nmarks, int nsamples, ellr_timeline **out)
{
  ellr_timeline *tl;

  *out = NULL;
  if (nmarks < 2 || nsamples < 1 || nsamples > (1 << 20) / nmarks) return ellr_error(ELLR_ERR_ARG, "a timeline needs two marks and one repetition, at most 2^20 events (got %d marks, %d repetitions)", nmarks, nsamples);
  if (!(tl = (ellr_timeline *)calloc(1, sizeof(*tl)))) return ellr_error(ELLR_ERR_MEM, "out of host memory");
  *out         = tl; /* destroyable from here on */
  tl->nmarks   = nmarks;
  tl->nsamples = nsamples;
  if (!(tl->ev = (cudaEvent_t *)calloc((size_t)nmarks * nsamples, sizeof(cudaEvent_t)))) return ellr_error(ELLR_ERR_MEM, "out of host memory");
  for (int i = 0; i < nmarks * nsamples; i++) CU(cudaEventCreate(&tl->ev[i]));
  return ELLR_OK;
}

void ellr_timeline_mark(ellr_timeline *tl, int k, void *stream)
{
  if (tl->done >= tl->nsamples || tl->failed) return;
  if (k < 0 || k >= tl->nmarks || cudaEventRecord(tl->ev[tl->done * tl->nmarks + k], (cudaStream_t)stream) != cudaSuccess) {
    (void)cudaGetLastError();
    tl->failed = 1;
  }
}

int ellr_timeline_next(ellr_timeline *tl)
{
  if (tl->done < tl->nsamples) tl->done++;
  return tl->done >= tl->nsamples;
}

int ellr_timeline_count(const ellr_timeline *tl)
{
  return tl->done;
}

ellr_status ellr_timeline_between(ellr_timeline *tl, int a, int b, int clamp, double *sum_ms)
{
  *sum_ms = 0;
  if (tl->failed) return ellr_error(ELLR_ERR_CUDA, "a mark of the timeline could not be recorded");
  if (a < 0 || b < 0 || a >= tl->nmarks || b >= tl->nmarks) return ellr_error(ELLR_ERR_ARG, "marks %d, %d of a timeline of %d marks", a, b, tl->nmarks);
  for (int s = 0; s < tl->done; s++) {
    float ms;
    CU(cudaEventSynchronize(tl->ev[s * tl->nmarks + b]));
    CU(cudaEventSynchronize(tl->ev[s * tl->nmarks + a]));
    CU(cudaEventElapsedTime(&ms, tl->ev[s * tl->nmarks + a], tl->ev[s * tl->nmarks + b]));
    *sum_ms += clamp && ms < 0 ? 0.0 : (double)ms;
  }
  return ELLR_OK;
}

void ellr_timeline_destroy(ellr_timeline *tl)
{
  if (!tl) return;
  for (int i = 0; tl->ev && i < tl->nmarks * tl->nsamples; i++)
    if (tl->ev[i]) (void)cudaEventDestroy(tl->ev[i]);
  (void)cudaGetLastError();
  free(tl->ev);
  free(tl);
}
