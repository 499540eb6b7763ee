/*
  The papers behind the storage and kernels a matrix uses, registered with PETSc's citation list so that
  `-citations` prints them (as PETSc does for its own methods).  Registered when the storage is built, for the
  methods that storage actually uses: ELLPACK-R/ELLR-T for every layout; PELLR and pJDS where rows are sorted and
  sliced (pellr); CSR-vector or IPCSR where the GPU multiplies with one of the CSR kernel families.
*/
#include "ellrimpl.h"

static const char ellr_cite_ellrt[] = "@article{vazquez2012ellrt,\n"
                                      "  author  = {F. V\\'azquez and J. J. Fern\\'andez and E. M. Garz\\'on},\n"
                                      "  title   = {Automatic tuning of the sparse matrix vector product on {GPUs} based on the {ELLR-T} approach},\n"
                                      "  journal = {Parallel Computing},\n"
                                      "  volume  = {38},\n"
                                      "  number  = {8},\n"
                                      "  pages   = {408--420},\n"
                                      "  year    = {2012}\n"
                                      "}\n";
static const char ellr_cite_pellr[] = "@article{wang2020pellr,\n"
                                      "  author  = {Zhiqi Wang and Tongxiang Gu},\n"
                                      "  title   = {{PELLR}: A Permutated {ELLPACK-R} Format for {SpMV} on {GPUs}},\n"
                                      "  journal = {Journal of Computer and Communications},\n"
                                      "  volume  = {8},\n"
                                      "  number  = {4},\n"
                                      "  pages   = {44--58},\n"
                                      "  year    = {2020},\n"
                                      "  doi     = {10.4236/jcc.2020.84004}\n"
                                      "}\n";
static const char ellr_cite_pjds[]  = "@inproceedings{kreutzer2012pjds,\n"
                                      "  author    = {M. Kreutzer and G. Hager and G. Wellein and H. Fehske and A. Basermann and A. R. Bishop},\n"
                                      "  title     = {Sparse matrix-vector multiplication on {GPGPU} clusters: A new storage format and a scalable implementation},\n"
                                      "  booktitle = {IEEE International Parallel and Distributed Processing Symposium Workshops (IPDPSW)},\n"
                                      "  year      = {2012},\n"
                                      "  note      = {arXiv:1112.5588}\n"
                                      "}\n";
static const char ellr_cite_csrv[]  = "@inproceedings{bell2009spmv,\n"
                                      "  author    = {N. Bell and M. Garland},\n"
                                      "  title     = {Implementing sparse matrix-vector multiplication on throughput-oriented processors},\n"
                                      "  booktitle = {Proceedings of the Conference on High Performance Computing Networking, Storage and Analysis (SC '09)},\n"
                                      "  year      = {2009}\n"
                                      "}\n";
static const char ellr_cite_ipcsr[] = "@article{gao2016ipcsr,\n"
                                      "  author  = {Jiaquan Gao and Panpan Qi and Guixia He},\n"
                                      "  title   = {Efficient {CSR}-Based Sparse Matrix-Vector Multiplication on {GPU}},\n"
                                      "  journal = {Mathematical Problems in Engineering},\n"
                                      "  pages   = {4596943},\n"
                                      "  year    = {2016}\n"
                                      "}\n";

static PetscBool ellr_cited_ellrt, ellr_cited_pellr, ellr_cited_pjds, ellr_cited_csrv, ellr_cited_ipcsr;

/* family: the GPU kernel family in use (ELLR_FAMILY_*), or -1 for the CPU storage */
PetscErrorCode MatELLRRegisterCitations(MatType format, int family)
{
  PetscFunctionBegin;
  if (family == ELLR_FAMILY_CSR_VECTOR) PetscCall(PetscCitationsRegister(ellr_cite_csrv, &ellr_cited_csrv));
  else if (family == ELLR_FAMILY_IPCSR) PetscCall(PetscCitationsRegister(ellr_cite_ipcsr, &ellr_cited_ipcsr));
  else PetscCall(PetscCitationsRegister(ellr_cite_ellrt, &ellr_cited_ellrt));
  if (format && format[0] == 'p') { /* MATPELLR */
    PetscCall(PetscCitationsRegister(ellr_cite_pellr, &ellr_cited_pellr));
    PetscCall(PetscCitationsRegister(ellr_cite_pjds, &ellr_cited_pjds));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
