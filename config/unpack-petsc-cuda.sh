#!/usr/bin/env bash
# unpack-petsc-cuda.sh TARBALL DEST [--check] -- unpack the PETSc made by config/pack-petsc-cuda.sh on the GPU machine.
#
#   config/unpack-petsc-cuda.sh .petsc-cuda/petsc-cuda.tar.xz /tmp/petsc-cuda --check
#   make PETSC_DIR=/tmp/petsc-cuda ...            # PETSC_ARCH empty: it is a --prefix install
#   PETSC_OPTIONS="-use_gpu_aware_mpi 0" mpiexec --allow-run-as-root -n 1 ./prog ...
#
# DEST becomes the PETSc directory (DEST/include, DEST/lib/libpetsc.so, DEST/lib/petsc/conf/variables, ...). It is
# replaced if it holds an earlier unpack (a DEST/PACKINFO); any other non-empty DEST is refused. The shipped
# DEST/relocate.sh then rewrites the build machine's absolute paths (install prefix, CUDA lib dir, python) in the conf
# files and headers to DEST and this machine's CUDA (CUDA_HOME, default /usr/local/cuda).
# --check compiles a tiny PETSc program against DEST (the makefile idiom a plugin uses) and runs it on 1 rank:
# it prints the PETSc version and, where a GPU is present, checks a VECCUDA vector.
# Run time needs: libcudart/cublas/cusparse/cusolver/curand 13/12 (CUDA 13 toolkit), libmpi.so.40 (Open MPI 4.1),
# libopenblas.so.0, libstdc++, and -use_gpu_aware_mpi 0 with an MPI that is not GPU-aware. No NVML library.
set -euo pipefail
say() { printf '[unpack-petsc-cuda] %s\n' "$*"; }
die() { printf '[unpack-petsc-cuda] ERROR: %s\n' "$*" >&2; exit 1; }

(($# >= 2)) || die "usage: $0 TARBALL DEST [--check]"
TARBALL=$1 DEST=$2 CHECK=${3:-}
[[ -f $TARBALL ]] || die "no tarball $TARBALL"
case $TARBALL in
  *.tar.zst) command -v zstd >/dev/null || die "zstd missing here: repack with PETSC_CUDA_PACK_FORMAT=xz"; DECOMP=(zstd -dc) ;;
  *.tar.xz)  command -v xz >/dev/null || die "xz missing (apt-get install xz-utils)"; DECOMP=(xz -dc -T0) ;;
  *) die "$TARBALL: expected .tar.xz or .tar.zst" ;;
esac
if [[ -e $DEST ]]; then
  if [[ -f $DEST/PACKINFO ]]; then say "replacing the earlier unpack in $DEST"; rm -rf "$DEST"
  elif [[ -n $(ls -A "$DEST" 2>/dev/null) ]]; then die "$DEST exists and is not empty"
  fi
fi
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd -P)
say "unpacking $TARBALL -> $DEST"
"${DECOMP[@]}" "$TARBALL" | tar -C "$DEST" --strip-components=1 -xf -
[[ -x $DEST/relocate.sh && -f $DEST/PACKINFO ]] || die "$TARBALL is not a pack-petsc-cuda.sh tarball"
"$DEST/relocate.sh"

[[ $CHECK == --check ]] || exit 0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/smoke.c" <<'EOF'
#include <petscvec.h>
#if defined(PETSC_HAVE_CUDA)
  #include <cuda_runtime.h>
#endif
int main(int argc, char **argv)
{
  char      ver[256];
  int       ndev = 0;
  Vec       x;
  PetscReal nrm;
  PetscInt  n = 1000;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscGetVersion(ver, sizeof(ver)));
#if defined(PETSC_HAVE_CUDA)
  if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s; PETSC_HAVE_CUDA defined; CUDA devices: %d\n", ver, ndev));
#else
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s; PETSC_HAVE_CUDA not defined\n", ver));
#endif
  PetscCall(VecCreate(PETSC_COMM_WORLD, &x));
  PetscCall(VecSetSizes(x, PETSC_DECIDE, n));
  PetscCall(VecSetType(x, ndev > 0 ? VECCUDA : VECSTANDARD));
  PetscCall(VecSet(x, 2.0));
  PetscCall(VecNorm(x, NORM_1, &nrm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Vec type %s: norm_1 = %g (expected %g) %s\n", ndev > 0 ? VECCUDA : VECSTANDARD, (double)nrm, 2.0 * n, nrm == 2.0 * n ? "OK" : "WRONG"));
  PetscCheck(nrm == 2.0 * n, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "wrong norm");
  PetscCall(VecDestroy(&x));
  PetscCall(PetscFinalize());
  return 0;
}
EOF
printf 'smoke: smoke.o\n\t$''{CLINKER} -o $@ $< $''{PETSC_LIB}\ninclude $''{PETSC_DIR}/lib/petsc/conf/variables\ninclude $''{PETSC_DIR}/lib/petsc/conf/rules\n' >"$T/makefile"
say "check: compiling a tiny PETSc program against $DEST"
make -s -C "$T" PETSC_DIR="$DEST" PETSC_ARCH= smoke || die "compiling/linking against $DEST failed"
ldd "$T/smoke" | grep -q 'not found' && { ldd "$T/smoke" | grep 'not found' >&2; die "unresolved libraries (set LD_LIBRARY_PATH)"; }
say "check: running it (mpiexec -n 1, -use_gpu_aware_mpi 0)"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec -n 1 "$T/smoke" -use_gpu_aware_mpi 0 || die "the check program failed"
say "check passed"
