#!/usr/bin/env bash
# config/setup.sh - installs or checks what petsc-ellr needs, then says what it found.
#
# On Debian/Ubuntu as root it installs every missing package that a README command or a test uses;
# otherwise it prints the exact command to run.  What each package is for:
#   make gcc pkg-config            building the library, and the test that builds a program from petscellr.pc
#   g++                            nvcc's host compiler and libstdc++ (-lstdc++): when nvcc is found, the CUDA
#                                  backend is compiled in (only a Recommends of python3-scipy: not brought here)
#   petsc-dev                      PETSc (real double, 32-bit indices): the default PETSC_DIR, /usr/lib/petsc
#   libpetsc<V>-dev-examples       PETSc's own KSP tutorials ex2/ex23/ex50 that make check runs with the types
#                                  (a Recommends of petsc-dev: --no-install-recommends never brings it)
#   libpetsc64-real<V>-dev         64-bit-index PETSc: make check builds the library against it too
#   libopenmpi-dev openmpi-bin     MPI (mpiexec for 2 and 4 ranks)
#   python3-numpy python3-scipy    tutorials/mtx2petsc.py (the real-matrix tests)
#   python3-petsc4py               tutorials/ex3.py (the petsc4py example make check runs)
#   valgrind zlib1g-dev            the valgrind tests; the spmv benchmark reads gzipped matrices
#   libblas3 liblapack3            the reference BLAS and LAPACK, and
#   libopenblas0-pthread           OpenBLAS: the solve tests run under each (LD_LIBRARY_PATH picks it), whichever one
#                                  the libblas.so.3 alternative points to
#   python3-venv                   (with nvcc) a virtual environment for PyPI's cuobjdump, for the cubin test
# Also used, and always there: python3 (tests/lib/numdiff.py; a Depends of petsc-dev and python3-numpy),
# coreutils (timeout, mktemp), diffutils (cmp), libc-bin (ldd), mawk.  Not installed here: what the GPU
# set-up needs (config/build-petsc-cuda.sh installs libopenblas-dev as root and names a missing python3-pip).
# <V> is the version of the petsc-dev found (3.18 on Debian 12).
# PETSC_DIR (and PETSC_ARCH) pick another PETSc, e.g. a CUDA-enabled one (config/build-petsc-cuda.sh);
# then only the tools are installed.
set -euo pipefail

PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
PETSC_ARCH=${PETSC_ARCH:-}
tools=(make gcc g++ pkg-config python3-venv libopenmpi-dev openmpi-bin python3-numpy python3-scipy valgrind zlib1g-dev libblas3 liblapack3 libopenblas0-pthread)
if [ "$PETSC_DIR" = /usr/lib/petsc ]; then
  # the version-named packages: from the installed PETSc, else from the archive's candidate
  v=$(dpkg-query -W -f='${Version}' petsc-dev 2>/dev/null || true)
  [ -n "$v" ] || v=$(apt-cache policy petsc-dev 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -1)
  v=$(echo "$v" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
  # Debian 12 (PETSc 3.18): libpetsc3.18-dev-examples and libpetsc64-real3.18-dev
  v=${v:-3.18}
  debian_pkgs=("${tools[@]}" petsc-dev python3-petsc4py)
  debian_pkgs+=("libpetsc$v-dev-examples" "libpetsc64-real$v-dev")
else
  debian_pkgs=("${tools[@]}")
fi

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${debian_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "petsc-ellr setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # petsc-dev's version was a guess until it was installed: if another arrived, its packages follow
    if [ "$PETSC_DIR" = /usr/lib/petsc ]; then
      iv=$(dpkg-query -W -f='${Version}' petsc-dev 2>/dev/null | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
      if [ -n "$iv" ] && [ "$iv" != "$v" ]; then exec "$0" "$@"; fi
    fi
  else
    echo "petsc-ellr setup: missing packages: ${missing[*]}" >&2
    echo "  install them with:  sudo apt-get install ${missing[*]}" >&2
    echo "  (or point PETSC_DIR at an existing PETSc installation)" >&2
    exit 1
  fi
fi

# cuobjdump (the test that lists the library's cubins) when nvcc builds the CUDA backend: the toolkit's own, or
# PyPI's nvidia-cuda-cuobjdump in a virtual environment of the repository (.tools/venv; Debian's python3 takes
# no pip installs outside one).
nvcc_found=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || echo "")
if [ -n "$nvcc_found" ] && ! command -v cuobjdump >/dev/null 2>&1 && [ ! -x "$(dirname "$nvcc_found")/cuobjdump" ]; then
  tools="$(cd "$(dirname "$0")/.." && pwd)/.tools/venv"
  if ! ls "$tools"/lib/python3*/site-packages/nvidia/*/bin/cuobjdump >/dev/null 2>&1; then
    echo "petsc-ellr setup: installing cuobjdump (PyPI nvidia-cuda-cuobjdump) into $tools"
    { python3 -m venv "$tools" && "$tools/bin/pip" install -q nvidia-cuda-cuobjdump; } ||
      echo "petsc-ellr setup: could not install nvidia-cuda-cuobjdump (needs python3-venv and PyPI): the cuda_cubins test will fail" >&2
  fi
fi

conf=""
for c in "$PETSC_DIR/$PETSC_ARCH/include/petscconf.h" "$PETSC_DIR/include/petscconf.h"; do
  [ -f "$c" ] && { conf=$c; break; }
done
if [ -z "$conf" ] || [ ! -f "$PETSC_DIR/lib/petsc/conf/variables" ]; then
  echo "petsc-ellr setup: no PETSc found at PETSC_DIR=$PETSC_DIR (PETSC_ARCH=$PETSC_ARCH)." >&2
  echo "  Install Debian's (apt-get install petsc-dev) or set PETSC_DIR to a PETSc installation." >&2
  exit 1
fi
incdir=$(dirname "$conf")
ver=$(awk '/define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR) /{v[$2]=$3} END{print v["PETSC_VERSION_MAJOR"]"."v["PETSC_VERSION_MINOR"]"."v["PETSC_VERSION_SUBMINOR"]}' "$incdir/petscversion.h" "$PETSC_DIR/include/petscversion.h" 2>/dev/null)
if grep -q "define PETSC_USE_COMPLEX 1" "$conf"; then
  echo "petsc-ellr setup: PETSc $ver at $PETSC_DIR has complex scalars; petsc-ellr needs real double scalars." >&2
  echo "  Use a PETSc configured with --with-scalar-type=real --with-precision=double (Debian: petsc-dev, not petsc-complex-dev)." >&2
  exit 1
fi
if ! grep -q "define PETSC_USE_REAL_DOUBLE 1" "$conf"; then
  echo "petsc-ellr setup: PETSc $ver at $PETSC_DIR does not use double precision; petsc-ellr needs --with-precision=double." >&2
  exit 1
fi
minor=$(echo "$ver" | cut -d. -f2)
if [ "${ver%%.*}" != 3 ] || [ "$minor" -lt 18 ]; then
  echo "petsc-ellr setup: PETSc $ver is older than 3.18, the oldest version petsc-ellr supports." >&2
  exit 1
fi
petsc_cuda=no; grep -q "define PETSC_HAVE_CUDA 1" "$conf" && petsc_cuda=yes
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || echo "")
gpu=none
if command -v nvidia-smi >/dev/null 2>&1; then gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || echo none); fi
idx=32; grep -q "define PETSC_USE_64BIT_INDICES 1" "$conf" && idx=64
echo "petsc-ellr setup: PETSc $ver at $PETSC_DIR${PETSC_ARCH:+ ($PETSC_ARCH)}, real double, ${idx}-bit indices, PETSc CUDA: $petsc_cuda"
echo "petsc-ellr setup: nvcc: ${nvcc:-not found (CPU backend only)}; GPU: ${gpu:-none}"
