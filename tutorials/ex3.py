#!/usr/bin/env python3
"""ex3.py - petsc-ellr from petsc4py: a 2D Poisson problem solved with CG + Jacobi, the matrix stored as
ellrt and as pellr, each solution checked against the same solve with aij.

The plugin is loaded through PETSc's options, on the command line or in PETSC_OPTIONS:

    python3 tutorials/ex3.py -dll_append $PWD/build/lib/libpetscellr.so
    PETSC_OPTIONS="-dll_append $PWD/build/lib/libpetscellr.so" mpiexec -n 2 python3 tutorials/ex3.py -n 64

petsc4py and libpetscellr.so must use the same PETSc: Debian's python3-petsc4py is built against
/usr/lib/petsc (32-bit indices), so the plugin is build/lib/libpetscellr.so of a plain `make`.

Options: -n <32> (grid of n x n interior points), -types <ellrt,pellr> (the types compared with aij),
-ksp_rtol <1e-8>, and any KSP/PC option (-ksp_type, -pc_type, ...; the residual norm stays the
unpreconditioned one, which the check below needs).

The check: with x0 = 0 and the unpreconditioned residual norm, a solve that stops at
||b - A x|| <= rtol ||b|| has ||x - x*|| <= ||A^-1|| rtol ||b|| <= cond(A) rtol ||x*||.  Two such solves
(aij and ellrt) therefore differ by at most 2 cond(A) rtol ||x*|| (||x*|| taken as ||x_aij||, up to a
factor 1 + cond(A) rtol).  cond(A) of the 5-point Laplacian with Dirichlet boundaries on an n x n grid is
known exactly: lambda_min,max = 8 sin^2, 8 cos^2 (pi / (2 (n + 1))), so cond(A) = cot^2(pi / (2 (n + 1))).
The program exits with status 1 when a solve does not converge or a difference exceeds that bound,
and 2 when a type is unknown (the plugin is not loaded).
"""
import ctypes
import math
import sys

import petsc4py

petsc4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402  (after init: the options, -dll_append among them, are read there)

# -mat_ellr_backend cpu or cuda asks for the ELLPACK-R storage: then every product must run on it
storage_asked = PETSc.Options().getString("mat_ellr_backend", "auto") in ("cpu", "cuda")
PETSc.Log.begin()  # event counts: ELLRMult proves that the plugin's products ran
comm = PETSc.COMM_WORLD
opts = PETSc.Options()
n = opts.getInt("n", 32)
types = [t for t in opts.getString("types", "ellrt,pellr").split(",") if t]
REASONS = {v: k for k, v in vars(PETSc.KSP.ConvergedReason).items() if isinstance(v, int)}


def poisson(mat_type):
    """The 2D 5-point Laplacian (stencil 4, -1) of n x n interior points, row by row in parallel."""
    N = n * n
    A = PETSc.Mat().create(comm=comm)
    A.setSizes([N, N])
    A.setType(mat_type)
    A.setPreallocationNNZ((5, 2))
    rstart, rend = A.getOwnershipRange()
    for row in range(rstart, rend):
        i, j = divmod(row, n)
        A.setValue(row, row, 4.0)
        if i > 0:
            A.setValue(row, row - n, -1.0)
        if i < n - 1:
            A.setValue(row, row + n, -1.0)
        if j > 0:
            A.setValue(row, row - 1, -1.0)
        if j < n - 1:
            A.setValue(row, row + 1, -1.0)
    A.assemble()
    return A


def ellr_format(A):
    """The matrix's petsc-ellr format (MatELLRGetFormat: "ellrt", "pellr" or None), called through ctypes in the
    library that -dll_append loaded (petsc4py does not wrap it); MatGetType names the base type (seqaij, mpiaij)."""
    path = PETSc.Options().getString("dll_append", None)
    if not path:
        return None
    lib = ctypes.CDLL(path)  # the library PETSc loaded already: the same handle
    fmt = ctypes.c_char_p()
    if lib.MatELLRGetFormat(ctypes.c_void_p(A.handle), ctypes.byref(fmt)) != 0:
        return None
    return fmt.value.decode() if fmt.value else None


def solve(mat_type):
    try:
        A = poisson(mat_type)
    except PETSc.Error:
        PETSc.Sys.Print(f"ex3: matrix type {mat_type} is unknown: load the plugin with "
                        "-dll_append /path/to/libpetscellr.so (command line or PETSC_OPTIONS)")
        sys.exit(2)
    xe, b = A.createVecs()
    # an exact solution with some variation, the same on any number of processes
    rstart, rend = xe.getOwnershipRange()
    xe.setValues(range(rstart, rend), [1.0 + ((37 * k) % 17) / 17.0 for k in range(rstart, rend)])
    xe.assemble()
    A.mult(xe, b)
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.setType("cg")
    ksp.getPC().setType("jacobi")
    ksp.setTolerances(rtol=1e-8, atol=0.0)
    ksp.setFromOptions()
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    x = b.duplicate()
    ev = PETSc.Log.Event("ELLRMult")
    before = ev.getPerfInfo()["count"]
    ksp.solve(b, x)
    products = ev.getPerfInfo()["count"] - before
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1.0, b)  # r = b - A x
    e = x.duplicate()
    e.waxpy(-1.0, xe, x)
    return dict(type=A.getType(), format=ellr_format(A), its=ksp.getIterationNumber(), reason=ksp.getConvergedReason(),
                rtol=ksp.getTolerances()[0], ksp=ksp.getType(), pc=ksp.getPC().getType(), x=x,
                relres=r.norm() / b.norm(), err=e.norm() / xe.norm(), products=products)


ok = True
ref = solve("aij")
rtol = ref["rtol"]
cond = 1.0 / math.tan(math.pi / (2 * (n + 1))) ** 2
bound = 2 * cond * rtol
PETSc.Sys.Print(f"ex3: 2D Poisson, {n} x {n} grid ({n * n} unknowns), {comm.getSize()} process(es), "
                f"KSP {ref['ksp']} + PC {ref['pc']}, rtol {rtol:g}, cond(A) {cond:.4g}")


def report(name, s, extra=""):
    global ok
    reason = REASONS.get(s["reason"], str(s["reason"]))
    fmt = f" (petsc-ellr format {s['format']})" if s["format"] else ""
    PETSc.Sys.Print(f"{name:6s}: matrix type {s['type']}{fmt}, {s['its']} iterations, {reason}, "
                    f"||b - A x||/||b|| {s['relres']:.2e}, ||x - x*||/||x*|| {s['err']:.2e}{extra}")
    if s["reason"] <= 0:
        PETSc.Sys.Print(f"ex3: the {name} solve did not converge")
        ok = False


report("aij", ref)
for t in types:
    s = solve(t)
    d = s["x"].copy()
    d.axpy(-1.0, ref["x"])
    maxdiff = d.norm(PETSc.NormType.INFINITY)
    reldiff = d.norm() / ref["x"].norm()
    report(t, s, f", ELLRMult products {s['products']}")
    PETSc.Sys.Print(f"{t:6s}: max |x - x_aij| {maxdiff:.3e}, ||x - x_aij||/||x_aij|| {reldiff:.3e} "
                    f"(bound 2 cond(A) rtol = {bound:.3e}): {'within' if reldiff <= bound else 'ABOVE'}")
    if reldiff > bound:
        ok = False
    if s["format"] != t:
        PETSc.Sys.Print(f"ex3: asked for type {t}, got type {s['type']} with format {s['format']}")
        ok = False
    if s["products"] < 1 and storage_asked:
        PETSc.Sys.Print(f"ex3: no ELLRMult event: the products of {t} did not run on the ELLPACK-R storage")
        ok = False
    elif s["products"] < 1:
        PETSc.Sys.Print(f"{t:6s}: AIJ's own products ran (-mat_ellr_backend auto without a GPU)")
PETSc.Sys.Print(f"ex3: {', '.join(types)} {'agree with aij' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
