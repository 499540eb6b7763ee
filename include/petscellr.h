/*
  petscellr.h - public interface of petsc-ellr, GPU ELLPACK-R matrix types for PETSc.

  Unmodified programs need none of this: load the library with
      -dll_append /path/to/libpetscellr.so -mat_type ellrt      (or pellr)
  Programs that link libpetscellr.so directly call PetscELLRInitializePackage() once
  after PetscInitialize().
*/
#ifndef PETSCELLR_H
#define PETSCELLR_H

#include <petscksp.h>

/*MC
   MATELLR - MATELLR = "ellrt" - A genuine `MATAIJ` matrix (`MATAIJCUSPARSE` with a PETSc built with CUDA and a GPU
   visible) whose products `MatMult()`, `MatMultAdd()`, `MatMultTranspose()` and `MatMultTransposeAdd()` run on
   ELLPACK-R storage with T threads per row (ELLR-T) on the GPU.

   `MatSetType()`, -mat_type, -dm_mat_type and `MatConvert()` with "ellrt" (or "seqaijellrt", "mpiaijellrt") make the
   base type with PETSc's own create function and attach the storage to it, so assembly, factorizations, MatProduct,
   COO assembly and every PC work exactly as with the base type.  `MatGetType()` therefore names the base type;
   `MatELLRGetFormat()`, -mat_view ::ascii_info, the ELLRMult event of -log_view and -citations name the format.
   Without a GPU the products are `MATAIJ`'s own, so it is never slower than `MATAIJ` there.

   Options Database Keys (also under the matrix's options prefix; listed by -help):
+  -mat_type ellrt                        - sets the matrix type
.  -mat_ellr_backend <auto,cuda,cpu,aij>  - where products run: auto = cuda when the library has CUDA and a GPU is visible,
                                            else aij (the base type's products, no second copy of the matrix); cpu = the
                                            ELLPACK-R storage on the CPU (for testing the format)
.  -mat_ellr_threads_per_row <0>          - T in {1,2,4,8,16,32}; -1 = each slice its own (the smallest power of two with
                                            16 T >= its longest row); 0 = automatic (a model of the row lengths, checked
                                            by at most 3 timed products on large blocks)
.  -mat_ellr_slice_height <32>            - rows per slice, each as wide as its longest row; 0 = one slice of all rows
                                            (plain full-width ELLPACK-R)
.  -mat_ellr_sort <false>                 - store rows sorted by decreasing length (PELLR), inside windows picked from the
                                            matrix (no sort where it would remove under 2% of the stored entries)
.  -mat_ellr_kernel <sliced,auto,csr_vector,ipcsr> - GPU kernel family: sliced = the ELLPACK-R layout; csr_vector
                                            (adaptive CSR-vector) and ipcsr (IPCSR) on the CSR arrays; auto = timed per matrix
.  -mat_ellr_long_rows <0>                - rows of at least this many entries leave the slices for chunks of 256 entries
                                            shared by many warps; 0 = automatic, -1 = none
.  -mat_ellr_tune <model,exhaustive,none> - how GPU parameters left automatic (T, block size) are picked
-  -mat_ellr_max_fill <8>                 - refuse storage of more than this many times CSR's bytes (0 = no limit)

   Notes:
   The storage is a cache of the CSR: built at the first product, refilled when values change (on the GPU, from
   aijcusparse's device CSR), rebuilt when the pattern changes.  Column offsets are 16-bit where a slice's span allows;
   long rows and transposed products are summed in a fixed order, so every product gives the same bits.
   In parallel each process's diagonal block uses the format and the off-diagonal block stores its non-empty rows,
   sorted and sliced; the product is MPIAIJ's, so the ghost exchange overlaps the diagonal block's product.

   References:
+  * - F. Vazquez, J. J. Fernandez, E. M. Garzon, Automatic tuning of the sparse matrix vector product on GPUs based
       on the ELLR-T approach, Parallel Computing 38(8), 408-420, 2012 (the storage and the kernel)
.  * - N. Bell, M. Garland, Implementing sparse matrix-vector multiplication on throughput-oriented processors,
       SC '09, 2009 (CSR-vector, with -mat_ellr_kernel csr_vector)
-  * - J. Gao, P. Qi, G. He, Efficient CSR-based sparse matrix-vector multiplication on GPU, Mathematical Problems
       in Engineering 2016, 4596943, 2016 (IPCSR, with -mat_ellr_kernel ipcsr)

   Level: beginner

.seealso: `MATPELLR`, `MATAIJ`, `MATAIJCUSPARSE`, `MatELLRGetFormat()`, `PetscELLRInitializePackage()`
M*/
#define MATELLR        "ellrt"
#define MATSEQAIJELLRT "seqaijellrt"
#define MATMPIAIJELLRT "mpiaijellrt"

/*MC
   MATPELLR - MATPELLR = "pellr" - Like `MATELLR`, with rows permuted by decreasing length where that removes
   padding, cut into slices of 32 rows (as pJDS does), so that storage stays near CSR on irregular matrices.

   Its defaults are -mat_ellr_sort true -mat_ellr_kernel auto (on the GPU the sliced layout, or the CSR kernel that is
   faster for the matrix); -mat_ellr_slice_height 0 gives the PELLR paper's full-width layout.

   References:
+  * - Z. Wang, T. Gu, PELLR: A permutated ELLPACK-R format for SpMV on GPUs, Journal of Computer and
       Communications 8(4), 44-58, 2020 (rows permuted by length; its cost model counts warp iterations)
.  * - M. Kreutzer, G. Hager, G. Wellein, H. Fehske, A. Basermann, A. R. Bishop, Sparse matrix-vector multiplication
       on GPGPU clusters: a new storage format and a scalable implementation, IPDPS Workshops, 2012 (pJDS: sorted
       rows in slices; the MPI product overlapping the halo exchange)
-  * - the ELLR-T, CSR-vector and IPCSR papers of `MATELLR`

   Level: beginner

.seealso: `MATELLR`, `MATAIJ`, `MatELLRGetFormat()`, `PetscELLRInitializePackage()`
M*/
#define MATPELLR        "pellr"
#define MATSEQAIJPELLR  "seqaijpellr"
#define MATMPIAIJPELLR  "mpiaijpellr"

/* Where products run: AUTO resolves to CUDA where the library has it and a GPU is visible, else to AIJ. */
typedef enum {
  MAT_ELLR_BACKEND_AUTO, /* CUDA when possible, else AIJ */
  MAT_ELLR_BACKEND_CUDA, /* the ELLPACK-R storage on the GPU */
  MAT_ELLR_BACKEND_CPU,  /* the ELLPACK-R storage on the CPU (for testing the format; slower than AIJ) */
  MAT_ELLR_BACKEND_AIJ   /* the base type's own products: no second copy of the matrix */
} MatELLRBackend;
PETSC_EXTERN const char *const MatELLRBackends[];


/*MC
   KSPCGDEVICE - "cgdevice": the conjugate gradient method of `KSPCG` with every scalar of the recurrence kept on the
   GPU, the vector updates fused into three passes per iteration and runs of iterations replayed as one CUDA graph

   Options Database Key:
.  -ksp_cgdevice_check_every <k> - how many iterations run between two looks of the host at the residual norms
   (default: chosen from the measured time of an iteration; 1 with a monitor or a convergence test of the user's)

   Notes:
   Use it as `KSPCG`: the same iterates up to rounding, the same norms, tolerances, monitors and breakdown reasons.
   The iterations run without a host synchronization each: the residual norm of every iteration is recorded on the
   GPU and the host reads them every k iterations.  With PETSc's default convergence test the GPU applies the same test
   itself and stops at the same iteration as `KSPCG`; another test is applied by the host after every iteration (or
   after every k with -ksp_cgdevice_check_every k, then the solution may be up to k - 1 iterations past the one
   reported).

   The graph holds the whole iteration when the preconditioner is `PCNONE` or `PCJACOBI` and the operator is a
   sequential `MATELLR`, `MATPELLR` or `MATSEQAIJCUSPARSE` with CUDA vectors.  Other preconditioners on one process
   run the same passes without a graph, the host looking after every iteration.  On several processes with CUDA
   vectors and one GPU each the passes run around PETSc's product, every inner product summed over the ranks by NCCL
   on the GPU (the communicator of the MPI product's ghost exchange; -ellr_nccl false or NCCL missing: `KSPCG`'s
   loop).  Host vectors on several processes, trust-region or eigenvalue-estimating uses, the single-reduction variant (`KSPCGUseSingleReduction()`), `KSPSetCheckNormIteration()`
   and transpose solves run `KSPCG`'s own loop (`-info` says why); host vectors run the passes on the CPU.

   Level: intermediate

.seealso: `KSPCG`, `KSPSetType()`, `MATELLR`, `MATPELLR`
M*/
#define KSPCGDEVICE "cgdevice"

/*MC
   KSPBCGSDEVICE - "bcgsdevice": the BiCGStab method of `KSPBCGS` with every scalar of the recurrence kept on the GPU,
   the vector updates fused into five passes per iteration (the inner products computed by the passes that write the
   vectors) and runs of iterations replayed as one CUDA graph

   Options Database Key:
.  -ksp_bcgsdevice_check_every <k> - how many iterations run between two looks of the host at the residual norms
   (default: chosen from the measured time of an iteration; 1 with a monitor or a convergence test of the user's)

   Notes:
   Use it as `KSPBCGS` with left preconditioning: the same iterates up to rounding, the same norms, tolerances,
   monitors and breakdown reasons (a zero (v, rp), a singular preconditioned operator, a zero rho, and the exact
   solution found when s = 0).  The residual norm of every iteration is recorded on the GPU and the host reads them
   every k iterations; with PETSc's default convergence test the GPU applies the same test itself and stops at the
   same iteration as `KSPBCGS`; another test is applied by the host after every iteration (or after every k with
   -ksp_bcgsdevice_check_every k, then the solution may be up to k - 1 iterations past the one reported).

   The graph holds the whole iteration (two products, five passes) when the preconditioner is `PCNONE` or `PCJACOBI`
   and the operator is a sequential `MATELLR`, `MATPELLR` or `MATSEQAIJCUSPARSE` with CUDA vectors.  Other
   preconditioners on one process run the same passes around PETSc's application of the preconditioner, without a
   graph, the host looking after every iteration.  Several processes run the passes as `KSPCGDEVICE` does there.
   Several processes without NCCL, right preconditioning (with its
   unpreconditioned norm), `KSPSetCheckNormIteration()`, a diagonally scaled preconditioner, -ksp_max_it 0 and
   transpose solves run `KSPBCGS`'s own loop (`-info` says why); host vectors run the passes on the CPU.

   Level: intermediate

.seealso: `KSPBCGS`, `KSPCGDEVICE`, `KSPSetType()`, `MATELLR`, `MATPELLR`
M*/
#define KSPBCGSDEVICE "bcgsdevice"

PETSC_EXTERN PetscErrorCode PetscELLRInitializePackage(void);
PETSC_EXTERN PetscErrorCode MatELLRGetFormat(Mat, MatType *);
PETSC_EXTERN PetscErrorCode MatELLRGetProductCount(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatELLRGetBackend(Mat, MatELLRBackend *);
PETSC_EXTERN PetscErrorCode MatELLRGetDeviceBytes(Mat, PetscLogDouble *);

#endif
