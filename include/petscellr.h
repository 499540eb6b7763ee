/*
  petscellr.h - public interface of petsc-ellr, GPU ELLPACK-R matrix types for PETSc.

  Unmodified programs need none of this: load the library with
      -dll_append /path/to/libpetscellr.so -mat_type ellrt      (or pellr)
  Programs that link libpetscellr.so directly call PetscELLRInitializePackage() once
  after PetscInitialize().
*/
#ifndef PETSCELLR_H
#define PETSCELLR_H

#include <petscmat.h>

/*MC
   MATELLR - MATELLR = "ellrt" - A matrix type whose products run on ELLPACK-R storage with T
   threads per row (ELLR-T) on the GPU (CUDA).  Without a GPU its products are AIJ's own, so it is never
   slower than `MATAIJ` there.

   This matrix type is identical to `MATSEQAIJELLRT` on one process and `MATMPIAIJELLRT` otherwise.
   Assembly, factorizations, MatProduct and every PC work through the base class: `MATAIJCUSPARSE` with a PETSc
   built with CUDA (so they run on the GPU as for aijcusparse), else `MATAIJ`; only the products (MatMult,
   MatMultAdd, MatMultTranspose, MatMultTransposeAdd) use the ELLPACK-R storage.

   Options Database Keys (also under the matrix's options prefix; listed by -help):
+  -mat_type ellrt                      - sets the matrix type
.  -mat_ellr_backend <auto,cuda,cpu,aij> - where products run: auto = cuda when the library has CUDA and a GPU is
                                          visible, else aij (AIJ's own CPU products, no second copy of the matrix);
                                          cpu = the ELLPACK-R storage on the CPU (for testing the format)
.  -mat_ellr_threads_per_row <0>        - T in {1,2,4,8,16,32}; -1 = each slice its own T (the smallest power of two
                                          with 16 T >= its longest row); 0 = automatic: under 32768 rows one T with
                                          4 T >= the widest slice (halved under -mat_ellr_max_fill); else per slice
                                          where some slice's T is 4x the mean row's or more, else from nnz/row
                                          (searched, per slice included, with -mat_ellr_tune exhaustive)
.  -mat_ellr_block_size <0>             - GPU threads per block (multiple of 32, at most 1024); 0 = automatic (256, or searched)
.  -mat_ellr_slice_height <32>          - rows per slice, each as wide as its longest row; 0 = one slice of all rows
                                          (plain full-width ELLPACK-R)
.  -mat_ellr_sort <false>               - store rows sorted by decreasing length (PELLR)
.  -mat_ellr_sort_window <-1>           - with -mat_ellr_sort: sort only inside windows of this many rows; 0 = all
                                          rows; -1 = picked from the matrix (no sort where a full sort removes under
                                          2% of the stored entries, else the smallest window of 32 or 1024 slices
                                          within 2% of the full sort)
.  -mat_ellr_index16 <true>             - 16-bit column offsets from a per-slice base in every slice whose columns
                                          span under 65535 (10 bytes per entry instead of 12); false = 32-bit indices
.  -mat_ellr_long_rows <0>              - rows of at least this many entries leave the slices (they pad nothing)
                                          for the long-row path: chunks of 256 entries that separate warps
                                          multiply; 0 = automatic (rows in their own order, matrices of 2^20 entries
                                          or more: max(512, 16 x the mean row length)); -1 = none
.  -mat_ellr_long_join <segmented,atomic> - GPU: how a long row's chunks meet: segmented = partial sums added in a
                                          fixed order (the same bits in every product); atomic = atomicAdd into y
.  -mat_ellr_transpose <stored,atomic>  - GPU MatMultTranspose: stored = a transposed copy made at the first one,
                                          rows summed in a fixed order (the same bits in every product; a second
                                          copy of the matrix on the GPU); atomic = A's storage, atomicAdd into y
.  -mat_ellr_max_fill <8>               - refuse storage of more than this many times CSR's bytes (0 = no limit;
                                          storage under 1 MiB is never refused)
.  -mat_ellr_tune <model,exhaustive,none> - how the GPU kernel's parameters left at 0 are picked: model = from
                                          row statistics, at most 3 timed products on blocks larger than twice the
                                          L2 cache; exhaustive = timed search over T, block size and kernel options;
                                          none = the model's pick untimed.  Decisions are cached by pattern.
.  -mat_ellr_kernel <sliced,auto,csr_vector,ipcsr> - GPU kernel family: sliced = the ELLPACK-R layout (default of
                                          ellrt); csr_vector (adaptive CSR-vector) and ipcsr (IPCSR) multiply with the uploaded
                                          CSR arrays; auto (default of pellr) = a timed product of each on large blocks,
                                          else a model from the row statistics
.  -mat_ellr_pin_host <true>            - page-lock the CSR arrays (cudaHostRegister) while the pattern lives:
                                          uploads and value refreshes at the link's speed
.  -mat_ellr_cusparse_base <true>       - with a PETSc built with CUDA: build on MATAIJCUSPARSE (factorizations, products,
                                         COO and vector operations on the GPU); false: on MATAIJ (read when the type is set)
.  -mat_ellr_spgemm_warmup <true>       - aijcusparse base: run cuSPARSE's SpGEMM once on a 1000-row matrix of its own
                                          before this process's first MatProduct with these types (GAMG set-ups
                                          stopped inside cuSPARSE's SpGEMM now and then without it)
-  -mat_ellr_verify <false>             - check every GPU product against the CPU engine (slow; for debugging)

   Notes:
   In parallel each process's diagonal block uses the chosen format and the off-diagonal block is stored by its
   non-empty rows only, sorted and sliced (neither its set-up nor its product touches the empty rows); the product is MPIAIJ's, so the ghost exchange overlaps the diagonal
   block's product.  The storage is built at the first product and is rebuilt or refilled whenever the matrix
   changes.  `-mat_view ::ascii_info` reports where products run and what the storage costs.

   References:
+  * - F. Vazquez, J. J. Fernandez, E. M. Garzon, Automatic tuning of the sparse matrix vector product on GPUs based
       on the ELLR-T approach, Parallel Computing 38(8), 408-420, 2012 (the storage and the kernel)
.  * - N. Bell, M. Garland, Implementing sparse matrix-vector multiplication on throughput-oriented processors,
       SC '09, 2009 (CSR-vector, with -mat_ellr_kernel csr_vector)
-  * - J. Gao, P. Qi, G. He, Efficient CSR-based sparse matrix-vector multiplication on GPU, Mathematical Problems
       in Engineering 2016, 4596943, 2016 (IPCSR, with -mat_ellr_kernel ipcsr)
   `-citations` prints those the storage of a run used.

   Level: beginner

.seealso: `MATPELLR`, `MATAIJ`, `MATSELL`, `PetscELLRInitializePackage()`
M*/
#define MATELLR        "ellrt"
#define MATSEQAIJELLRT "seqaijellrt"
#define MATMPIAIJELLRT "mpiaijellrt"

/*MC
   MATPELLR - MATPELLR = "pellr" - ELLPACK-R with rows permuted by decreasing length and cut into
   slices of 32 rows (as pJDS does), so that storage stays near CSR on irregular matrices.

   This matrix type is identical to `MATSEQAIJPELLR` on one process and `MATMPIAIJPELLR` otherwise.
   It takes the options of `MATELLR`; its defaults are -mat_ellr_sort true (the window picked from the matrix:
   rows keep their order where sorting would remove almost no padding, as on stencils) -mat_ellr_slice_height 32
   -mat_ellr_kernel auto (on the GPU the sliced layout, or the CSR kernel that is faster for the matrix),
   and -mat_ellr_slice_height 0 gives the PELLR paper's full-width layout.

   References:
+  * - Z. Wang, T. Gu, PELLR: A permutated ELLPACK-R format for SpMV on GPUs, Journal of Computer and
       Communications 8(4), 44-58, 2020 (rows permuted by length; its cost model counts warp iterations)
.  * - M. Kreutzer, G. Hager, G. Wellein, H. Fehske, A. Basermann, A. R. Bishop, Sparse matrix-vector multiplication
       on GPGPU clusters: a new storage format and a scalable implementation, IPDPS Workshops, 2012 (pJDS: sorted
       rows in slices; the MPI product overlapping the halo exchange)
-  * - the ELLR-T, CSR-vector and IPCSR papers of `MATELLR`

   Level: beginner

.seealso: `MATELLR`, `MATAIJ`, `PetscELLRInitializePackage()`
M*/
#define MATPELLR        "pellr"
#define MATSEQAIJPELLR  "seqaijpellr"
#define MATMPIAIJPELLR  "mpiaijpellr"

/* Where products run: AUTO resolves to CUDA where the library has it and a GPU is visible, else to AIJ. */
typedef enum {
  MAT_ELLR_BACKEND_AUTO, /* CUDA when possible, else AIJ */
  MAT_ELLR_BACKEND_CUDA, /* the ELLPACK-R storage on the GPU */
  MAT_ELLR_BACKEND_CPU,  /* the ELLPACK-R storage on the CPU (for testing the format; slower than AIJ) */
  MAT_ELLR_BACKEND_AIJ   /* AIJ's own CPU products on the CSR: no second copy of the matrix */
} MatELLRBackend;
PETSC_EXTERN const char *const MatELLRBackends[];

/* Log events: one per product (so -log_view shows the plugin's kernels ran), one per C = A B with B dense on the
   storage, and setup. */
PETSC_EXTERN PetscLogEvent MAT_ELLRMult, MAT_ELLRMatMult, MAT_ELLRBuild, MAT_ELLRTune, MAT_ELLRCopyToGPU, MAT_ELLRWarmUp;

PETSC_EXTERN PetscErrorCode PetscELLRInitializePackage(void);
PETSC_EXTERN PetscErrorCode MatELLRGetProductCount(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatELLRGetBackend(Mat, MatELLRBackend *);

#endif
