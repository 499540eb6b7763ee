#!/usr/bin/env bash
# pack-petsc-cuda.sh -- pack the PETSc built by config/build-petsc-cuda.sh for the GPU machine.
#
#   config/pack-petsc-cuda.sh            # -> <repo>/.petsc-cuda/petsc-cuda.tar.xz  (~10 MB)
#   config/unpack-petsc-cuda.sh <repo>/.petsc-cuda/petsc-cuda.tar.xz DEST    # on the GPU machine
#
# What goes in (everything under a top folder petsc-cuda/, which becomes DEST when unpacked):
#   include/                     all headers (public and petsc/private/*, which the plugin needs)
#   lib/libpetsc.so*             libpetsc stripped with --strip-unneeded, plus its two symlinks
#   lib/petsc/conf/              variables, rules, petscvariables, ... (the makefile idiom of a PETSc install)
#   lib/petsc/bin/               PetscBinaryIO.py, petscmpiexec, ...
#   lib/pkgconfig/               petsc.pc / PETSc.pc
#   relocate.sh, PACKINFO        see below
# Left out: share/ (examples, data files: 65 MB), docs, the NVML link stub (only built with PETSC_CUDA_NVML=1 and
# never needed: libpetsc then names libnvidia-ml.so.1, which the GPU machine's driver provides).
#
# Format: xz by default, because the GPU machine has xz but no zstd (probed 2026-11-22: Ubuntu 24.04 image without the
# zstd CLI). PETSC_CUDA_PACK_FORMAT=zst makes a .tar.zst instead (installs zstd with apt-get here if missing).
#
# Paths: a PETSc install is not relocatable as built. lib/petsc/conf/{variables,petscvariables,rules,...},
# lib/pkgconfig/*.pc and include/petscconf.h, petscmachineinfo.h, petscconfiginfo.h hold the absolute build prefix
# (e.g. /work/main/.petsc-cuda/install, which cannot exist on the GPU machine: its repository root differs), the CUDA
# library directory as seen here (/usr/local/cuda/lib: this toolkit has lib/ and lib64 -> lib; the GPU machine has only
# lib64 -> targets/x86_64-linux/lib) and the build machine's python. PACKINFO records those paths, and relocate.sh
# (shipped inside the tarball, also run by config/unpack-petsc-cuda.sh) rewrites them with sed in those text files to
# the folder it sits in, the GPU machine's CUDA lib directory and its python3. It may be rerun after moving the folder.
# libpetsc.so itself keeps the build prefix as a compiled-in string (PETSC_DIR, used only for messages and defaults)
# and RUNPATH /usr/lib/x86_64-linux-gnu/openblas-pthread:/usr/local/cuda/lib; on the GPU machine libcudart & co. and
# libopenblas.so.0 are found through ld.so.conf anyway, and executables linked there get -Wl,-rpath,DEST/lib.
#
# Environment: PETSC_CUDA_PREFIX (install to pack, default <repo>/.petsc-cuda/install),
#              PETSC_CUDA_PACK_FORMAT (xz | zst, default xz), PETSC_CUDA_TARBALL (output file).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
WORK="$REPO_ROOT/.petsc-cuda"
PREFIX=${PETSC_CUDA_PREFIX:-$WORK/install}
FORMAT=${PETSC_CUDA_PACK_FORMAT:-xz}
OUT=${PETSC_CUDA_TARBALL:-$WORK/petsc-cuda.tar.$FORMAT}

say() { printf '[pack-petsc-cuda] %s\n' "$*"; }
die() { printf '[pack-petsc-cuda] ERROR: %s\n' "$*" >&2; exit 1; }

[[ -f "$PREFIX/.petsc-cuda-stamp" ]] || die "no finished build at $PREFIX (run config/build-petsc-cuda.sh first)"
PREFIX=$(cd "$PREFIX" && pwd -P)
LIBREAL=$(readlink -f "$PREFIX/lib/libpetsc.so")
[[ -f "$LIBREAL" ]] || die "no $PREFIX/lib/libpetsc.so"
case $FORMAT in
  xz)  command -v xz >/dev/null || die "xz missing (apt-get install xz-utils)"; COMPRESS=(xz -9 -T0) ;;
  zst) if ! command -v zstd >/dev/null; then
         say "installing zstd with apt-get"
         DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zstd >/dev/null || die "zstd missing (apt-get install zstd)"
       fi
       COMPRESS=(zstd -19 -T0 -q) ;;
  *)   die "PETSC_CUDA_PACK_FORMAT must be xz or zst, not '$FORMAT'" ;;
esac
command -v strip >/dev/null || die "strip missing (apt-get install binutils)"

STAGE="$WORK/pack-stage"
TOP="$STAGE/petsc-cuda"
rm -rf "$STAGE"; mkdir -p "$TOP/lib/petsc"
say "staging $PREFIX -> $TOP"
cp -a "$PREFIX/include" "$TOP/"
cp -a "$PREFIX/lib/petsc/conf" "$PREFIX/lib/petsc/bin" "$TOP/lib/petsc/"
[[ -d "$PREFIX/lib/pkgconfig" ]] && cp -a "$PREFIX/lib/pkgconfig" "$TOP/lib/"
cp -a "$PREFIX/.petsc-cuda-stamp" "$TOP/BUILDINFO"
rm -rf "$TOP/lib/petsc/bin/maint" "$TOP/lib/petsc/conf/uninstall.py"
find "$TOP" -name '__pycache__' -prune -exec rm -rf {} +
# libpetsc: stripped real file + the soname and dev symlinks exactly as installed
strip --strip-unneeded -o "$TOP/lib/$(basename "$LIBREAL")" "$LIBREAL"
for l in "$PREFIX"/lib/libpetsc.so*; do [[ -L $l ]] && cp -a "$l" "$TOP/lib/"; done
nm -D --undefined-only "$TOP/lib/$(basename "$LIBREAL")" | grep -q nvml \
  && say "note: libpetsc uses NVML (PETSC_CUDA_NVML=1 build): the driver's libnvidia-ml.so.1 is needed at run time"

# Paths to rewrite on the target, as found in the conf files.
BUILD_CUDA=$(sed -n 's/^CUDA_INCLUDE = -I\(.*\)\/include$/\1/p' "$PREFIX/lib/petsc/conf/petscvariables")
BUILD_CUDA_LIBDIR=$(sed -n 's/^CUDA_LIB = -Wl,-rpath,\([^ ]*\) .*/\1/p' "$PREFIX/lib/petsc/conf/petscvariables")
BUILD_PYTHON=$(sed -n 's/^PYTHON = //p' "$PREFIX/lib/petsc/conf/petscvariables")
[[ -n $BUILD_CUDA && -n $BUILD_CUDA_LIBDIR ]] || die "could not read CUDA paths from petscvariables"
cat >"$TOP/PACKINFO" <<EOF
# written by pack-petsc-cuda.sh on $(uname -n) $(date -u +%Y-%m-%dT%H:%M:%SZ); read by relocate.sh
PETSC_VERSION=$(sed -n 's/^petsc_version=//p' "$PREFIX/.petsc-cuda-stamp")
CURRENT_PREFIX=$PREFIX
BUILD_CUDA=$BUILD_CUDA
BUILD_CUDA_LIBDIR=$BUILD_CUDA_LIBDIR
BUILD_PYTHON=$BUILD_PYTHON
EOF

cat >"$TOP/relocate.sh" <<'RELOCATE'
#!/usr/bin/env bash
# relocate.sh [CUDA_HOME] -- make this unpacked PETSc usable from the folder it sits in.
# Rewrites, in the text files that hold them (lib/petsc/conf/*, lib/pkgconfig/*.pc, include/petsc*.h, lib/petsc/bin/*),
#  - the prefix recorded in PACKINFO (CURRENT_PREFIX) -> this folder,
#  - the build machine's CUDA (BUILD_CUDA, BUILD_CUDA_LIBDIR) -> CUDA_HOME (default /usr/local/cuda) and its library
#    folder (lib64 where it has libcudart.so, else lib),
#  - the build machine's python -> python3 found here.
# Idempotent; rerun it after moving the folder.
set -euo pipefail
DEST=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CUDA_HOME=${1:-${CUDA_HOME:-/usr/local/cuda}}
# shellcheck disable=SC1091
source <(grep -E '^[A-Z_]+=' "$DEST/PACKINFO")
CUDA_LIBDIR=$CUDA_HOME/lib64
[[ -e $CUDA_LIBDIR/libcudart.so ]] || CUDA_LIBDIR=$CUDA_HOME/lib
[[ -e $CUDA_LIBDIR/libcudart.so ]] || echo "[relocate] warning: no libcudart.so in $CUDA_HOME/lib64 or /lib" >&2
PY=$(command -v python3 || echo python3)
re()  { printf '%s' "$1" | sed 's/[][\.^$*+?(){}|#]/\\&/g'; }   # escape a literal for a sed -E regex
rep() { printf '%s' "$1" | sed 's/[\&#]/\\&/g'; }          # escape a literal for a sed replacement
E='([^A-Za-z0-9_.+-]|$)'                                   # end of a path component
SCRIPT=(
  -e "s#$(re "$CURRENT_PREFIX")$E#$(rep "$DEST")\\1#g"
  -e "s#$(re "$BUILD_CUDA_LIBDIR")$E#$(rep "$CUDA_LIBDIR")\\1#g"
  -e "s#$(re "$BUILD_CUDA")$E#$(rep "$CUDA_HOME")\\1#g"
)
[[ -n ${BUILD_PYTHON:-} ]] && SCRIPT+=(-e "s#$(re "$BUILD_PYTHON")$E#$(rep "$PY")\\1#g")
# BUILD_CUDA_LIBDIR is rewritten before BUILD_CUDA, so /usr/local/cuda/lib/stubs -> <CUDA_LIBDIR>/stubs.
# Files: every text file under lib/petsc, lib/pkgconfig and include/ that names one of the old paths.
mapfile -t files < <(grep -rlIF -e "$CURRENT_PREFIX" -e "$BUILD_CUDA" ${BUILD_PYTHON:+-e "$BUILD_PYTHON"} \
                       "$DEST/lib/petsc" "$DEST/lib/pkgconfig" "$DEST/include" 2>/dev/null || true)
if ((${#files[@]})); then sed -E -i "${SCRIPT[@]}" "${files[@]}"; fi
sed -i -e "s#^CURRENT_PREFIX=.*#CURRENT_PREFIX=$(rep "$DEST")#" -e "s#^BUILD_CUDA=.*#BUILD_CUDA=$(rep "$CUDA_HOME")#" \
       -e "s#^BUILD_CUDA_LIBDIR=.*#BUILD_CUDA_LIBDIR=$(rep "$CUDA_LIBDIR")#" -e "s#^BUILD_PYTHON=.*#BUILD_PYTHON=$(rep "$PY")#" \
       "$DEST/PACKINFO"
echo "[relocate] PETSc $PETSC_VERSION at $DEST (CUDA libs $CUDA_LIBDIR, python $PY): ${#files[@]} files rewritten"
echo "[relocate] use: make PETSC_DIR=$DEST ...   (include \${PETSC_DIR}/lib/petsc/conf/variables and rules)"
RELOCATE
chmod +x "$TOP/relocate.sh"

say "writing $OUT (${COMPRESS[*]})"
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
tar -C "$STAGE" --owner=0 --group=0 --numeric-owner -cf - petsc-cuda | "${COMPRESS[@]}" >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
say "staged $(du -sh "$TOP" | cut -f1) (libpetsc stripped: $(du -h "$TOP/lib/$(basename "$LIBREAL")" | cut -f1)), tarball $(du -h "$OUT" | cut -f1): $OUT"
rm -rf "$STAGE"
say "on the GPU machine: config/unpack-petsc-cuda.sh $OUT DEST   (then make PETSC_DIR=DEST ..., PETSC_OPTIONS='-use_gpu_aware_mpi 0')"
