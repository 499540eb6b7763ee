#!/usr/bin/env bash
# build-petsc-cuda.sh -- build a lean CUDA-enabled PETSc on the (GPU-less) CPU machine for the GPU machine.
#
# The GPU machine (Ubuntu 24.04, CUDA 13.0, Open MPI 4.1.x, libopenblas.so.0) has no PETSc and no network, so
# PETSc is built here, packed with config/pack-petsc-cuda.sh and unpacked there with config/unpack-petsc-cuda.sh.
#
#   config/build-petsc-cuda.sh          # ~9 min on 2 cores the first time; exits at once when already built
#
# Result: $PETSC_CUDA_PREFIX (default <repo>/.petsc-cuda/install), a --prefix install with
#   - PETSc 3.26.1 from the PyPI `petsc` sdist (cached in .petsc-cuda/downloads/)
#   - CUDA from $CUDA_HOME (default /usr/local/cuda), --with-cuda-arch=90 (H100/H200; no GPU here to detect)
#   - MPI: Debian's Open MPI (mpicc/mpicxx); BLAS/LAPACK: OpenBLAS linked as libopenblas.so.0 (all the GPU machine has)
#   - real double scalars, 32-bit indices, no Fortran, no X, shared libraries, no external packages
#   - optimized (--with-debugging=0); PETSC_CUDA_DEBUG=1 builds a debugging PETSc instead (argument and type checks,
#     stack traces on errors) into <repo>/.petsc-cuda/install-debug, to run the suite against PETSc's debug checks
# Everything (downloads, sources, logs, install) lives under <repo>/.petsc-cuda/ (git-ignored).
#
# NVML: PETSc 3.26 no longer needs NVML for --with-cuda; it is an opt-in (--with-cuda-nvml=1, only for
# -log_view_gpu_energy*) that makes libpetsc depend on the driver's libnvidia-ml.so.1. Default here: off.
# PETSC_CUDA_NVML=1 turns it on: nvml.h comes from the PyPI wheel nvidia-nvml-dev (header only, no library), a link
# stub libnvidia-ml.so (soname libnvidia-ml.so.1, every nvml* function of the header) is generated, and both are put
# with symlinks to the toolkit into a merged CUDA directory .petsc-cuda/cuda-nvml that is handed to --with-cuda-dir.
# The stub is never packed: at run time the driver's libnvidia-ml.so.1 is loaded.
#
# Environment (all optional):
#   PETSC_CUDA_PREFIX   install prefix                       (default <repo>/.petsc-cuda/install)
#   PETSC_CUDA_VERSION  PETSc version from PyPI              (default 3.26.1)
#   PETSC_CUDA_ARCH     CUDA architecture                    (default 90)
#   PETSC_CUDA_JOBS     make -j                              (default 2)
#   PETSC_CUDA_NVML     1 = configure --with-cuda-nvml=1     (default 0)
#   PETSC_CUDA_DEBUG    1 = configure --with-debugging=1     (default 0; default prefix .../install-debug)
#   CUDA_HOME           CUDA toolkit                         (default /usr/local/cuda)
# To rebuild: rm -rf "$PETSC_CUDA_PREFIX" (the stamp file inside it marks a finished build).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
WORK="$REPO_ROOT/.petsc-cuda"
DEBUG=${PETSC_CUDA_DEBUG:-0}
if [[ $DEBUG == 1 ]]; then
  PREFIX=${PETSC_CUDA_PREFIX:-$WORK/install-debug}; PETSC_ARCH_NAME=arch-cuda-debug; OPTFLAGS="-g -O1"
else
  PREFIX=${PETSC_CUDA_PREFIX:-$WORK/install}; PETSC_ARCH_NAME=arch-cuda; OPTFLAGS=-O2
fi
VERSION=${PETSC_CUDA_VERSION:-3.26.1}
CUDA_ARCH=${PETSC_CUDA_ARCH:-90}
JOBS=${PETSC_CUDA_JOBS:-2}
NVML=${PETSC_CUDA_NVML:-0}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVML_WHEEL_VERSION=13.0.87          # nvidia-nvml-dev matching CUDA 13.0 (only with PETSC_CUDA_NVML=1)
STAMP="$PREFIX/.petsc-cuda-stamp"
LOGDIR="$WORK/logs"; [[ $DEBUG == 1 ]] && LOGDIR="$WORK/logs-debug"

say()  { printf '[build-petsc-cuda] %s\n' "$*"; }
die()  { printf '[build-petsc-cuda] ERROR: %s\n' "$*" >&2; exit 1; }
run_logged() {   # run_logged NAME LOGFILE cmd... : run, log everything, show the tail on failure
  local name=$1 log=$2; shift 2
  say "$name (log: $log)"
  local t0=$SECONDS
  if ! "$@" >"$log" 2>&1; then
    printf '[build-petsc-cuda] ERROR: %s failed; last 40 lines of %s:\n' "$name" "$log" >&2
    tail -n 40 "$log" >&2
    [[ -f "$SRC/configure.log" && $name == configure* ]] && printf '  (full configure log: %s)\n' "$SRC/configure.log" >&2
    exit 1
  fi
  say "$name done in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- already built?
if [[ -f "$STAMP" ]]; then
  say "PETSc already built: $PREFIX"
  sed 's/^/  /' "$STAMP"
  say "(rm -rf '$PREFIX' to rebuild)"
  exit 0
fi
T_START=$SECONDS

# ---------------------------------------------------------------- prerequisites
missing=()
for tool in make gcc g++ tar python3 nm; do command -v "$tool" >/dev/null || missing+=("$tool"); done
command -v mpicc >/dev/null && command -v mpicxx >/dev/null || missing+=("mpicc/mpicxx (apt-get install libopenmpi-dev)")
python3 -m pip --version >/dev/null 2>&1 || missing+=("pip (apt-get install python3-pip)")
[[ -x "$CUDA_HOME/bin/nvcc" ]] || missing+=("nvcc in \$CUDA_HOME/bin (CUDA_HOME=$CUDA_HOME)")
for lib in cudart cublas cusparse cusolver cufft curand; do
  [[ -e "$CUDA_HOME/lib64/lib$lib.so" ]] || missing+=("$CUDA_HOME/lib64/lib$lib.so (CUDA toolkit math libraries)")
done
# OpenBLAS: link the library whose soname is libopenblas.so.0 (contains BLAS and LAPACK), not libblas.so.3/liblapack.so.3;
# installed here when missing and this is root on Debian/Ubuntu (libopenblas-dev), else named below as missing
if ! ls /usr/lib/x86_64-linux-gnu/openblas-*/libopenblas.so /usr/lib/x86_64-linux-gnu/libopenblas.so >/dev/null 2>&1 &&
   [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  say "installing libopenblas-dev (OpenBLAS, linked as libopenblas.so.0)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev >/dev/null || say "apt-get install libopenblas-dev failed"
fi
OPENBLAS_DIR=""
for d in /usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/x86_64-linux-gnu/openblas-openmp \
         /usr/lib/x86_64-linux-gnu/openblas-serial /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
  if [[ -e "$d/libopenblas.so" ]]; then OPENBLAS_DIR=$d; break; fi
done
[[ -n "$OPENBLAS_DIR" ]] || missing+=("libopenblas.so (apt-get install libopenblas-dev)")
((${#missing[@]} == 0)) || { printf '[build-petsc-cuda] ERROR: missing prerequisites:\n' >&2; printf '  - %s\n' "${missing[@]}" >&2; exit 1; }
if [[ -n "$OPENBLAS_DIR" ]] && command -v objdump >/dev/null; then
  soname=$(objdump -p "$OPENBLAS_DIR/libopenblas.so" | awk '/SONAME/{print $2}')
  [[ $soname == libopenblas.so.0 ]] || die "$OPENBLAS_DIR/libopenblas.so has soname '$soname', expected libopenblas.so.0"
fi
mkdir -p "$WORK/downloads" "$LOGDIR"

say "PETSc $VERSION -> $PREFIX"
say "CUDA $("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') at $CUDA_HOME, arch sm_$CUDA_ARCH; MPI $(command -v mpicc) ($(mpicc --showme:version 2>/dev/null | head -1 || echo '?'))"
say "BLAS/LAPACK: $OPENBLAS_DIR/libopenblas.so (libopenblas.so.0); NVML: $([[ $NVML == 1 ]] && echo on || echo off)"

# ---------------------------------------------------------------- source (PyPI sdist, cached)
TARBALL="$WORK/downloads/petsc-$VERSION.tar.gz"
if [[ ! -s "$TARBALL" ]]; then
  say "downloading the PyPI sdist petsc==$VERSION (pip prepares its metadata: ~1-2 min)"
  tmp=$(mktemp -d "$WORK/downloads/tmp.XXXXXX")
  python3 -m pip download --quiet --no-deps --no-binary :all: "petsc==$VERSION" -d "$tmp" >"$LOGDIR/download.log" 2>&1 \
    || { tail -n 20 "$LOGDIR/download.log" >&2; rm -rf "$tmp"; die "pip download petsc==$VERSION failed (network to PyPI?)"; }
  mv "$tmp/petsc-$VERSION.tar.gz" "$TARBALL" || die "pip did not produce petsc-$VERSION.tar.gz (see $LOGDIR/download.log)"
  rm -rf "$tmp"
else
  say "using cached $TARBALL"
fi
tar tzf "$TARBALL" "petsc-$VERSION/configure" >/dev/null 2>&1 || die "$TARBALL is not a PETSc source tarball (no configure); delete it"

SRC="$WORK/src/$PETSC_ARCH_NAME/petsc-$VERSION"   # one source tree per build, so both builds can coexist
say "unpacking a clean source tree into $SRC"
rm -rf "$SRC"; mkdir -p "$(dirname "$SRC")"
tar xzf "$TARBALL" -C "$(dirname "$SRC")"

# ---------------------------------------------------------------- NVML (optional)
CUDA_DIR_FOR_PETSC=$CUDA_HOME
NVML_OPT=--with-cuda-nvml=0
if [[ $NVML == 1 ]]; then
  NVDIR="$WORK/nvml"
  if [[ ! -s "$NVDIR/include/nvml.h" ]]; then
    say "downloading nvidia-nvml-dev==$NVML_WHEEL_VERSION (nvml.h) from PyPI"
    mkdir -p "$NVDIR/include"
    python3 -m pip download --quiet --no-deps "nvidia-nvml-dev==$NVML_WHEEL_VERSION" -d "$WORK/downloads" \
      >"$LOGDIR/download-nvml.log" 2>&1 || { tail -n 20 "$LOGDIR/download-nvml.log" >&2; die "pip download nvidia-nvml-dev failed"; }
    python3 - "$WORK/downloads" "$NVDIR/include" "$NVML_WHEEL_VERSION" <<'EOF'
import glob, sys, zipfile
whl = glob.glob(f"{sys.argv[1]}/nvidia_nvml_dev-{sys.argv[3]}-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    name = [n for n in z.namelist() if n.endswith("/nvml.h")][0]
    open(f"{sys.argv[2]}/nvml.h", "wb").write(z.read(name))
EOF
  fi
  # The wheel ships no library: generate a link stub exporting every nvml* function the header declares
  # (declarations look like "nvmlReturn_t DECLDIR nvmlInit_v2(void);" or "const DECLDIR char* nvmlErrorString(...)").
  mkdir -p "$NVDIR/lib"
  grep 'DECLDIR' "$NVDIR/include/nvml.h" | grep -oE '\bnvml[A-Za-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:](]//g' \
    | sort -u | awk '{printf "void %s(void) {}\n", $1}' >"$NVDIR/lib/nvml-stub.c"
  [[ -s "$NVDIR/lib/nvml-stub.c" ]] || die "found no nvml* functions in $NVDIR/include/nvml.h"
  gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$NVDIR/lib/libnvidia-ml.so" "$NVDIR/lib/nvml-stub.c"
  say "NVML link stub: $NVDIR/lib/libnvidia-ml.so ($(wc -l <"$NVDIR/lib/nvml-stub.c") functions, soname libnvidia-ml.so.1)"
  # PETSc looks for nvml.h in <cuda-dir>/include and libnvidia-ml.so in <cuda-dir>/lib64/stubs: merge them.
  CUDA_DIR_FOR_PETSC="$WORK/cuda-nvml"
  rm -rf "$CUDA_DIR_FOR_PETSC"; mkdir -p "$CUDA_DIR_FOR_PETSC"/{include,lib64/stubs}
  for e in "$CUDA_HOME"/*; do [[ $(basename "$e") == include || $(basename "$e") == lib64 ]] || ln -s "$e" "$CUDA_DIR_FOR_PETSC/"; done
  for e in "$CUDA_HOME"/include/*; do ln -s "$e" "$CUDA_DIR_FOR_PETSC/include/"; done
  for e in "$CUDA_HOME"/lib64/*; do [[ $(basename "$e") == stubs ]] || ln -s "$e" "$CUDA_DIR_FOR_PETSC/lib64/"; done
  for e in "$CUDA_HOME"/lib64/stubs/*; do ln -s "$e" "$CUDA_DIR_FOR_PETSC/lib64/stubs/"; done
  ln -s "$NVDIR/include/nvml.h" "$CUDA_DIR_FOR_PETSC/include/nvml.h"
  ln -s "$NVDIR/lib/libnvidia-ml.so" "$CUDA_DIR_FOR_PETSC/lib64/stubs/libnvidia-ml.so"
  NVML_OPT=--with-cuda-nvml=1
fi

# ---------------------------------------------------------------- configure, make, install
unset PETSC_DIR PETSC_ARCH PETSC_OPTIONS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # configure runs MPI test programs
cd "$SRC"
CONFIGURE_ARGS=(
  --prefix="$PREFIX"
  PETSC_ARCH="$PETSC_ARCH_NAME"
  --with-cc=mpicc --with-cxx=mpicxx --with-fc=0
  --with-cuda=1 --with-cuda-dir="$CUDA_DIR_FOR_PETSC" --with-cudac="$CUDA_HOME/bin/nvcc" --with-cuda-arch="$CUDA_ARCH"
  "$NVML_OPT"
  --with-blaslapack-lib="-L$OPENBLAS_DIR -lopenblas"
  --with-debugging="$DEBUG" --with-shared-libraries=1 --with-x=0
  --with-scalar-type=real --with-precision=double --with-64-bit-indices=0
  --with-ssl=0
  COPTFLAGS="$OPTFLAGS" CXXOPTFLAGS="$OPTFLAGS" CUDAOPTFLAGS="$OPTFLAGS"
)
printf '%s\n' "${CONFIGURE_ARGS[@]}" >"$LOGDIR/configure-args.txt"
say "configure ${CONFIGURE_ARGS[*]}"
run_logged "configure" "$LOGDIR/configure.out" ./configure "${CONFIGURE_ARGS[@]}"
cp -f "$SRC/configure.log" "$LOGDIR/configure.log" 2>/dev/null || true
run_logged "make -j$JOBS (~6-8 min on 2 cores)" "$LOGDIR/make.out" \
  make PETSC_DIR="$SRC" PETSC_ARCH="$PETSC_ARCH_NAME" MAKE_NP="$JOBS" -j"$JOBS" all
rm -rf "$PREFIX"
run_logged "make install" "$LOGDIR/install.out" make PETSC_DIR="$SRC" PETSC_ARCH="$PETSC_ARCH_NAME" install

# ---------------------------------------------------------------- sanity checks on the result
LIB="$PREFIX/lib/libpetsc.so"
[[ -e "$LIB" ]] || die "no $LIB after make install (see $LOGDIR/install.out)"
grep -q '^#define PETSC_HAVE_CUDA 1' "$PREFIX/include/petscconf.h" || die "PETSC_HAVE_CUDA is not defined in petscconf.h"
needed=$(objdump -p "$(readlink -f "$LIB")" | awk '/NEEDED/{print $2}' | tr '\n' ' ')
case " $needed " in *" libopenblas.so.0 "*) ;; *) die "libpetsc.so does not need libopenblas.so.0 (NEEDED: $needed)";; esac
case " $needed " in *" liblapack.so"*|*" libblas.so"*) die "libpetsc.so needs the reference BLAS/LAPACK (NEEDED: $needed)";; esac
nvml_syms=$(nm -D --undefined-only "$(readlink -f "$LIB")" | awk '/nvml/{print $2}' | tr '\n' ' ')
if [[ $NVML == 1 ]]; then
  for s in $nvml_syms; do grep -qx "void ${s%@*}(void) {}" "$WORK/nvml/lib/nvml-stub.c" || die "NVML stub lacks $s"; done
  say "libpetsc uses NVML: $nvml_syms (driver's libnvidia-ml.so.1 at run time)"
else
  [[ -z "$nvml_syms" ]] || die "libpetsc references NVML although --with-cuda-nvml=0: $nvml_syms"
fi

{
  echo "petsc_version=$VERSION"
  echo "prefix=$PREFIX"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $((SECONDS - T_START)) s"
  echo "cuda=$CUDA_HOME ($("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')) arch=$CUDA_ARCH nvml=$NVML"
  echo "configure=${CONFIGURE_ARGS[*]}"
  echo "libpetsc_needed=$needed"
} >"$STAMP"
say "done in $((SECONDS - T_START)) s: $PREFIX ($(du -sh "$PREFIX" | cut -f1)); logs in $LOGDIR"
say "next: config/pack-petsc-cuda.sh (tarball for the GPU machine)"
