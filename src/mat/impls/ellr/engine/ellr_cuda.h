/*
  ellr_cuda.h - the CUDA backend of the engine (PETSc-free).

  Device storage has the host layout of ellr.h.  The CSR is uploaded once (page-locked with
  pin_host); the plan (row order, slice offsets) and the O(nnz) fill run on the GPU, so that no
  O(n) host pass stands before the upload and tuning T costs a device refill -- except the plan of a block
  under ELLR_HOST_PLAN_ROWS rows and ELLR_HOST_PLAN_NNZ entries, made on the host, where the GPU's launches and read-backs would cost more.

  Life cycle (every call takes the stream to work on: a cudaStream_t as void *, NULL = the
  legacy default stream; all copies and kernels of a call go to that stream):

    ellr_cuda_create        plan, upload, fill with the plan's default T (or the one asked for)
                            and block size 256 (or the one asked for); no tuning.
    ellr_cuda_tune          (optional) tunes what the parameters left at 0, with timed products;
                            a no-op when nothing is left to tune, when already tuned, or with no rows.
    ellr_cuda_update_values new values of the same pattern (any number of times, before or after tune).
    ellr_cuda_mult / ellr_cuda_mult_mixed   products.
    ellr_cuda_destroy

  Stream ordering: the matrix keeps no stream.  Calls that touch its storage (update_values,
  mult, mult_mixed, tune) must be ordered by the caller: issue them all on one stream (PETSc's),
  or order the streams yourself.  create and tune return with their stream synchronized;
  update_values and the device products return without waiting for the GPU.
  The current CUDA device must be the one the matrix was created on.
*/
#ifndef ELLR_CUDA_H
#define ELLR_CUDA_H

#include "ellr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ellr_cuda_matrix ellr_cuda_matrix;

/* Number of usable CUDA devices; 0 when there is no device or no driver (never an error).
   Asked of the driver once per process, then cached. */
int ellr_cuda_device_count(void);

/* Makes device (local_rank mod device count) current for this host thread: one GPU per MPI rank
   of a node.  Used when PETSc itself has no CUDA and so chooses no device. */
ellr_status ellr_cuda_select_device(int local_rank);

/* Waits for all work on the current device, whatever the stream: the binding's fence between another library's
   copies and kernels (aijcusparse's, on streams of its own) and the storage's fill from the same device arrays. */
ellr_status ellr_cuda_device_synchronize(void);

/* Host arrays of at least ELLR_PIN_MIN bytes are page-locked (params.pin_host); smaller ones are copied as they
   are.  One cudaHostRegister costs ~0.2-0.4 ms whatever its size (H100 machine: 0.2-0.4 ms for EPA's 72 KB of
   values), then ~20 GB/s of host work, and buys a copy at ~54 GB/s instead of ~7 GB/s pageable
   (doc/performance.md): the two meet near 3 MB. */
#define ELLR_PIN_MIN ((size_t)4 << 20)
/* Values of at least ELLR_PIN_REFRESH_MIN bytes not page-locked at create are page-locked at the second
   ellr_cuda_update_values (params.pin_host; not after ellr_cuda_unpin_host): by the rates above a refresh of 1 MB
   saves ~0.12 ms against a registration of ~0.3-0.4 ms, paid back from the fourth refresh on. */
#define ELLR_PIN_REFRESH_MIN ((size_t)1 << 20)

/* Products with a dense block (ellr_cuda_mult_dense): sums per thread at most, and the fewest columns for the one-pass
   kernel (below: one product per column).  Measured on the H100 (tests/spmm, doc/performance.md "Sparse x dense"). */
#define ELLR_DENSE_NB       4
#define ELLR_DENSE_MIN_COLS 2

/* ELLR_FAMILY_AUTO on a block whose products would be timed: a sliced layout padded by at most this fill moves no
   more bytes than the CSR families' arrays (and coalesces its reads), so it is kept without timing them; that
   lets the build stream the CSR instead of holding it beside the layout (ellr_cuda_create). */
#define ELLR_UNTIMED_FILL 1.05

/* How the kernel parameters were picked. */
enum { ELLR_TUNED_BY_MODEL = 0, ELLR_TUNED_BY_EXHAUSTIVE, ELLR_TUNED_BY_NONE, ELLR_TUNED_BY_CACHE };

/* What the device copy chose and cost.  Times in ms: host wall clock, or CUDA events (GPU time) where said. */
typedef struct {
  int          threads_per_row; /* T in use (tuned when params asked for 0 and ellr_cuda_tune ran); with each slice's
                                   own T (plan->per_slice_T) the largest slice's */
  int          block_size;      /* threads per block in use (likewise) */
  size_t       device_bytes;    /* GPU memory held by the matrix, scratch_bytes included */
  size_t       scratch_bytes;   /* of which: CSR kept for tuning, refresh buffers, staging vectors */
  double       create_ms;       /* all of ellr_cuda_create */
  double       pin_ms;          /* cudaHostRegister of the CSR arrays (pin_host), host time, overlapped with the copies */
  double       plan_ms;         /* row offsets uploaded, the plan (on the GPU, or on the host and uploaded), read-backs, storage allocated (wall) */
  double       plan_parts_ms[3]; /* of which: row order, slice geometry (with the host plan: the plan and its upload), storage allocation */
  int          plan_on_host;    /* the plan was made on the host and uploaded (ELLR_HOST_PLAN_ROWS), not on the GPU */
  int          order_skipped;   /* sort_rows asked, rows left in their own order: the automatic family took IPCSR
                                   from the row lengths alone, and no padded layout is stored */
  double       upload_wait_ms;  /* after the plan, waiting for the upload thread (page-locking and queueing copies) */
  double       upload_ms;       /* column indices and values to the GPU: from the first copy to the last (events),
                                   the page-locking between the copies included */
  size_t       upload_bytes;    /* bytes of that upload: 12 nnz */
  double       fill_ms;         /* storage allocated and filled, work items (events; starts when the upload ends) */
  double       tune_ms;         /* ellr_cuda_tune (0 until it has tuned something) */
  int          tune_products;   /* products spent tuning */
  int          tune_how;        /* ELLR_TUNED_BY_* */
  int          tuned;           /* 1 once ellr_cuda_tune has run (or had nothing to do) */
  size_t       pinned_bytes;    /* host CSR bytes page-locked now */
  char         pin_note[160];   /* why an array was not page-locked (empty when all were, or none asked) */
  double       unpin_ms;        /* the last ellr_cuda_unpin_host */
  double       refresh_pin_ms;  /* page-locking the values at the second refresh (ELLR_PIN_REFRESH_MIN), host time */
  int          refreshes;       /* ellr_cuda_update_values calls */
  double       refresh_copy_ms; /* the last one's value copy (wall, waited for) */
  double       refresh_fill_ms; /* the last one's refill kernel (events); -1 while it runs or before any */
  int          family;          /* ELLR_FAMILY_SLICED, _CSR_VECTOR or _IPCSR: the family in use (AUTO resolved) */
  int          csr_T;           /* CSR families: lanes per row of CSR-vector (and of the transpose) */
  int          csr_blocks;      /* IPCSR: row blocks */
  float        family_ms[3];    /* AUTO, timed: one product of sliced, CSR-vector, IPCSR (ms, CUDA events); 0 untimed */
  int          streamed;        /* built from the host CSR streamed through the device in chunks: the whole CSR was
                                   never on the device (the plain build holds it beside the layout until tuned) */
  size_t       stage_bytes;     /* the staging buffer of a streamed build or refresh (freed when it returns) */
  int          borrowed;        /* ellr_cuda_create_on: a CSR family multiplies with the caller's device CSR */
  const ellr_plan *plan;        /* the plan in use: sizes, slice offsets and statistics (its rowlen and perm
                                   live on the GPU only: NULL here) */
} ellr_cuda_info;

/* Builds the device storage of a with parameters p on stream.  threads_per_row 0: the model's T
   (ellr_default_threads_per_row, or each slice's own by ellr.h's rule, or what the pattern cache holds for this
   pattern); block_size 0: 256
   -- until ellr_cuda_tune.  Fails with ELLR_ERR_FILL before the padded storage is allocated when
   max_fill is exceeded, and with ELLR_ERR_CUDA naming the bytes asked for when the GPU lacks memory.
   Nothing is leaked on failure.  Returns with stream synchronized: a's values may be changed right
   after; with p->pin_host its arrays must not be freed before ellr_cuda_unpin_host or destroy.
   From a host CSR of a block too large to plan on the host, with its columns increasing in each row
   (a->cols_sorted), no page-locking asked (p->pin_host), no exhaustive tuning, and a family that needs no CSR kept (the sliced layout, asked for or
   settled by its bytes: no long rows and at most ELLR_UNTIMED_FILL fill), the CSR is streamed through a staging
   buffer (info.streamed): the device holds the layout and at most 1/64 of the CSR at once.  Otherwise, when
   tuning is pending (T or block size 0, rows > 0) the uploaded CSR (12 nnz + 4 (n + 1) bytes) stays on the GPU
   until ellr_cuda_tune (or ellr_cuda_destroy) frees it. */
ellr_status ellr_cuda_create(const ellr_csr *a, const ellr_params *p, void *stream, ellr_cuda_matrix **d);

/* The storage on the caller's device CSR (a->d_rowptr, d_colidx, d_val, with a's host row offsets for the plan; no
   compressed rows): a CSR kernel family (p->family if it names one, else the model's: CSR-vector, or IPCSR for very
   uneven rows) multiplies with the caller's arrays, which are neither copied nor freed: they must stay allocated, keep
   their addresses and hold the current values until ellr_cuda_destroy (ellr_cuda_update_values only checks that they
   are the same arrays).  For a caller that holds a device CSR of its own anyway: one copy of the matrix on the GPU.
   Only the IPCSR row blocks are allocated. */
ellr_status ellr_cuda_create_on(const ellr_csr *a, const ellr_params *p, void *stream, ellr_cuda_matrix **d);
/* 1 when d was made by ellr_cuda_create_on on the device arrays of a. */
int ellr_cuda_borrows(const ellr_cuda_matrix *d, const ellr_csr *a);

/* Tunes T, block size and the automatic kernel options (only what p left at 0), timing products
   with CUDA events on stream, then frees the CSR kept by create.  a: the matrix given to create
   (or updated since), used only to check sizes; NULL is accepted.  A no-op when there is nothing
   to tune, when it has already run, or with no rows.  Returns with stream synchronized. */
ellr_status ellr_cuda_tune(ellr_cuda_matrix *d, const ellr_csr *a, void *stream);

/* ellr_cuda_tune with the caller's device vectors for its timed products (x: ncols entries, read as they are; y:
   nrows_out entries of scratch, overwritten; y != x), so that no vectors of the matrix's size are allocated beside
   the caller's: a product's own x and y, before the product overwrites y. */
ellr_status ellr_cuda_tune_with(ellr_cuda_matrix *d, const ellr_csr *a, const double *x, double *y, void *stream);
/* 1 while ellr_cuda_tune has not run on d (products run, with the model's choices). */
int ellr_cuda_tune_pending(const ellr_cuda_matrix *d);
/* 1 when d was built streamed (info.streamed): no CSR kept, so tuning may wait for the caller's vectors. */
int ellr_cuda_streamed(const ellr_cuda_matrix *d);

/* New values, same pattern: copies a->val to the GPU and refills the layout, on stream.  The sliced layout
   without long rows, without a CSR kept for tuning and without pin_host streams the values through a staging buffer freed before
   return (no second copy of the values stays on the device).  Otherwise the first call allocates device scratch
   (nnz values + n + 1 row offsets, kept until destroy) and uploads the row offsets; later calls allocate nothing.  With params.pin_host the second call page-locks a->val
   when create did not (ELLR_PIN_REFRESH_MIN): the caller then keeps it as for create's page-locking (not freed
   before ellr_cuda_unpin_host or destroy; info.pinned_bytes says).  Returns once a->val has been read (the copy is
   complete; a may be changed right after) with the refill still queued on stream. */
ellr_status ellr_cuda_update_values(ellr_cuda_matrix *d, const ellr_csr *a, void *stream);

/* Releases the page-locking of the host CSR arrays (params.pin_host): call it before the caller frees or
   reallocates them.  The device storage stays; later refreshes copy through the pageable path.  Waits for
   nothing: create and update_values return only after their copies are complete. */
ellr_status ellr_cuda_unpin_host(ellr_cuda_matrix *d);

/* y = A x (+ z) or, with transpose, y = A^T x (+ z); z may be NULL or alias y.
   Device pointers; queued on stream, returns without waiting. */
ellr_status ellr_cuda_mult(ellr_cuda_matrix *d, const double *x, const double *z, double *y, int transpose, void *stream);

/* The same product with each vector on the host (*_host = 1) or on the device (0), independently.
   z may be NULL, or equal to y (then z_host must equal y_host).  Host vectors go through pinned
   and device buffers owned by d (allocated at the first call, reused).  Queued on stream; returns
   when every host output is written: with y on the host, after a stream synchronize; with y on the
   device, without waiting (host inputs have been copied out by then, so they may change). */
ellr_status ellr_cuda_mult_mixed(ellr_cuda_matrix *d, const double *x, int x_host, const double *z, int z_host, double *y, int y_host, int transpose, void *stream);

/* C = A B for a dense block B of k columns: B column-major with leading dimension ldb (>= the matrix's columns), C
   with ldc (>= its rows); device pointers; queued on stream, returns without waiting.  On the sliced layout without
   long rows (ellr_cuda_dense_one_pass) one kernel reads each stored entry once for up to ELLR_DENSE_NB columns
   (ellr_cuda_dense.cuh); on the CSR families, with long rows, or for fewer than ELLR_DENSE_MIN_COLS columns, it is
   one product per column.  Same bits in every call. */
ellr_status ellr_cuda_mult_dense(ellr_cuda_matrix *d, int32_t k, const double *B, int64_t ldb, double *C, int64_t ldc, void *stream);
/* The diagonal of the stored matrix: diag[r] = A(r, r) for every row r of y (0 where the row holds no such entry; for
   a rectangular or compressed-row matrix, the entries whose column equals their row of y), on stream, queued.  diag
   is a device array of the rows of y.  What a diagonal preconditioner reads, without a copy of the matrix elsewhere. */
ellr_status ellr_cuda_diagonal(ellr_cuda_matrix *d, double *diag, void *stream);
/* 1 where ellr_cuda_mult_dense reads the storage once for a block of columns (above). */
int         ellr_cuda_dense_one_pass(const ellr_cuda_matrix *d);
void        ellr_cuda_get_info(const ellr_cuda_matrix *d, ellr_cuda_info *info);
/* Host CSR bytes page-locked now (info.pinned_bytes) without a CUDA call: for the binding after each refresh,
   where get_info's event query would also clear the last CUDA error of work not the engine's. */
size_t      ellr_cuda_pinned_bytes(const ellr_cuda_matrix *d);
/* The host array the storage holds page-locked, k = 0 row offsets, 1 column indices, 2 values (the pointer given
   to create, or to update_values for values page-locked there), or NULL where none is: a caller checks that the
   arrays it owns were not moved or freed behind it (no CUDA call). */
const void *ellr_cuda_pinned_array(const ellr_cuda_matrix *d, int k);
/* The plan the storage was made from (info.plan) without a CUDA call: the binding reads it at every product. */
const ellr_plan *ellr_cuda_plan(const ellr_cuda_matrix *d);
/* Frees everything; waits for the matrix's pending GPU work first. */
ellr_status ellr_cuda_destroy(ellr_cuda_matrix *d);

#ifdef __cplusplus
}
#endif
#endif
