#!/usr/bin/env python3
"""mtx2petsc.py - convert a Matrix Market file (.mtx or .mtx.gz) to PETSc binary for ex2 (-f file).

Reads with scipy.io.mmread (which expands symmetric/skew/hermitian storage to the full matrix and
gives pattern-only files the value 1.0) and writes with PETSc's PetscBinaryIO
($PETSC_DIR/lib/petsc/bin/PetscBinaryIO.py).

Usage:
  tutorials/mtx2petsc.py [options] INPUT.mtx[.gz] OUTPUT.petsc

Options:
  --pattern-value V    value given to the entries of a pattern-only matrix (default 1.0)
  --diag-dominant      make the matrix strictly diagonally dominant, for solves: every row gets
                       the diagonal  sum_j |a_ij| + 1  (a missing diagonal entry is added); empty rows
                       become rows with a diagonal 1. Keeps symmetry.
  --info               print rows, columns, nonzeros, min/max row length to stdout

Needs numpy and scipy (Debian: python3-numpy python3-scipy; use /usr/bin/python3 where another
python3 comes first in PATH). PETSC_DIR defaults to /usr/lib/petsc.

Example:
  /usr/bin/python3 tutorials/mtx2petsc.py --diag-dominant tests/matrices/memplus.mtx.gz /tmp/memplus.petsc
  build/tutorials/ex2 -f /tmp/memplus.petsc -mat_type pellr -ksp_type gmres -pc_type jacobi
"""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser(description="Matrix Market -> PETSc binary")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--pattern-value", type=float, default=1.0)
    ap.add_argument("--diag-dominant", action="store_true")
    ap.add_argument("--info", action="store_true")
    args = ap.parse_args()

    petsc_dir = os.environ.setdefault("PETSC_DIR", "/usr/lib/petsc")
    sys.path.insert(0, os.path.join(petsc_dir, "lib", "petsc", "bin"))
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    import PetscBinaryIO

    field = scipy.io.mminfo(args.input)[4]
    A = scipy.io.mmread(args.input)
    if not sp.issparse(A):
        A = sp.coo_matrix(A)
    if np.iscomplexobj(A.data):
        raise SystemExit("mtx2petsc.py: complex matrices are not supported by this PETSc build")
    A = sp.csr_matrix(A, dtype=np.float64)
    if field == "pattern":
        A.data[:] = args.pattern_value
    A.sum_duplicates()
    A.sort_indices()
    if args.diag_dominant:
        m, n = A.shape
        k = min(m, n)
        rowsum = np.asarray(abs(A).sum(axis=1)).ravel()
        d = A.diagonal()
        D = sp.diags(rowsum[:k] - np.abs(d[:k]) + 1.0 - d[:k], 0, shape=(m, n), format="csr")
        A = (A + D).tocsr()
        A.sum_duplicates()
        A.sort_indices()
    A.indices = A.indices.astype(np.int32)
    A.indptr = A.indptr.astype(np.int32)
    with open(args.output, "wb") as fh:
        PetscBinaryIO.PetscBinaryIO().writeMatSciPy(fh, A)
    if args.info:
        lens = np.diff(A.indptr)
        print("%s: %d x %d, %d nonzeros, row length min %d max %d mean %.1f, empty rows %d"
              % (os.path.basename(args.input), A.shape[0], A.shape[1], A.nnz,
                 lens.min() if len(lens) else 0, lens.max() if len(lens) else 0,
                 lens.mean() if len(lens) else 0.0, int((lens == 0).sum())))


if __name__ == "__main__":
    main()
