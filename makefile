# petsc-ellr: GPU ELLPACK-R matrix types for PETSc.
#
#   make run      set up (installs what is missing) and run the main job: 3D Poisson with -mat_type ellrt
#   make check    set up and run the test suite; last line "N passed, N failed"
#   make          build build/lib/libpetscellr.so, the tutorials and the tests against PETSC_DIR
#   make spmv     the stand-alone GPU benchmarks, SpMV and sparse x dense (need nvcc and cuSPARSE; run only where a GPU is)
#   make install PREFIX=/dir   lib/libpetscellr.so, include/petscellr.h, lib/pkgconfig/petscellr.pc (DESTDIR too)
#   make all64    the library and tests/diff_aij against the 64-bit-index PETSc (PETSC64_DIR) into BUILD/64
#
# PETSC_DIR (and PETSC_ARCH for in-tree builds) select the PETSc; the default is Debian's.
# nvcc is used when found (CUDA backend compiled in); WITH_CUDA=0 leaves it out.

PETSC_DIR ?= /usr/lib/petsc
PETSC_ARCH ?=
export PETSC_DIR PETSC_ARCH

PETSC_VARIABLES := $(wildcard $(PETSC_DIR)/lib/petsc/conf/variables)
ifneq ($(PETSC_VARIABLES),)
include $(PETSC_VARIABLES)
endif

BUILD      ?= build
NVCC       ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
WITH_CUDA  ?= $(if $(NVCC),1,0)
CUDA_DIR   ?= $(patsubst %/bin/nvcc,%,$(NVCC))
PETSCCONF  := $(firstword $(wildcard $(PETSC_DIR)/$(PETSC_ARCH)/include/petscconf.h $(PETSC_DIR)/include/petscconf.h))
PETSC_HAS_CUDA := $(if $(PETSCCONF),$(shell grep -c 'define PETSC_HAVE_CUDA 1' $(PETSCCONF)),0)

ENGINE_DIR := src/mat/impls/ellr/engine
ENGINE_C   := $(wildcard $(ENGINE_DIR)/*.c)
BINDING_C  := $(wildcard src/mat/impls/ellr/*.c src/mat/impls/ellr/seq/*.c src/mat/impls/ellr/mpi/*.c)
# the MPI product's ghost exchange through NCCL (loaded at run time; built where NCCL's header is found, NCCL_INC)
BINDING_C  += $(wildcard src/mat/utils/ellrhalo/*.c)
# (the toolkit's or the system's first: a header no newer than the NCCL loaded at run time keeps ncclConfig_t's layout)
NCCL_INC   ?= $(firstword $(patsubst %/nccl.h,%,$(wildcard $(CUDA_DIR)/include/nccl.h /usr/include/nccl.h $(CURDIR)/.petsc-cuda/nccl/include/nccl.h)))
# the CG loop (KSPCGDEVICE): its PETSc-free passes (cgloop_*) and the KSP binding
KSP_DIR    := src/ksp/impls/deviceloop
BINDING_C  += $(wildcard $(KSP_DIR)/*.c)
ENGINE_CU  := $(if $(filter 1,$(WITH_CUDA)),$(wildcard $(ENGINE_DIR)/*.cu) $(wildcard $(KSP_DIR)/*.cu))
TUTORIALS  := $(patsubst tutorials/%.c,$(BUILD)/tutorials/%,$(wildcard tutorials/*.c))
TESTS      := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c)) $(BUILD)/tests/gpu/ptap_loop $(BUILD)/tests/gpu/memory
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(wildcard tests/engine/*.c))
LIB        := $(BUILD)/lib/libpetscellr.so

OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(ENGINE_C) $(BINDING_C)) $(patsubst %.cu,$(BUILD)/obj/%.o,$(ENGINE_CU))

ELLR_INCLUDES := -Iinclude -I$(ENGINE_DIR)
ELLR_CPPFLAGS := $(ELLR_INCLUDES) $(if $(ENGINE_CU),-DPETSCELLR_HAVE_CUDA -I$(CUDA_DIR)/include)
# With a CUDA-enabled PETSc share its (shared) CUDA runtime; otherwise link the runtime statically, so
# libpetscellr.so loads on machines without CUDA and simply reports no GPU.
# cuSPARSE only with a CUDA PETSc (which links it anyway): the CG loop's product on aijcusparse matrices
CUDA_LIBS := $(if $(ENGINE_CU),-L$(CUDA_DIR)/lib64 $(if $(filter 0,$(PETSC_HAS_CUDA)),-lcudart_static -lrt -lpthread -ldl,-lcusparse -lcudart) -lstdc++ -ldl)
# CUDA_ARCH: SASS for each listed architecture, PTX of the last (for newer GPUs), e.g. make CUDA_ARCH="80 90".
# Default: with a CUDA PETSc, the architectures PETSc was built for (sm_NN in its CUDAC_FLAGS; make
# CUDA_ARCH_PETSC= ignores them); otherwise every one of CUDA_ARCH_ALL that this nvcc can build
# (nvcc --list-gpu-code), oldest first; 90 when nvcc lists none.  tests/gpu/check_arch.sh checks the library.
CUDA_ARCH_ALL := 75 80 86 89 90 100 120
ifeq ($(origin CUDA_ARCH),undefined)
ifneq ($(NVCC),)
CUDA_ARCH_NVCC  := $(shell $(NVCC) --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9][0-9]*\)$$/\1/p')
CUDA_ARCH_PETSC := $(if $(filter 1,$(PETSC_HAS_CUDA)),$(shell printf '%s\n' '$(CUDAC_FLAGS)' | grep -o 'sm_[0-9]*' | sed 's/sm_//' | sort -nu))
CUDA_ARCH       := $(or $(filter $(CUDA_ARCH_NVCC),$(CUDA_ARCH_PETSC)),$(filter $(CUDA_ARCH_NVCC),$(CUDA_ARCH_ALL)),90)
endif
endif
CUDA_GENCODE = $(foreach a,$(CUDA_ARCH),-gencode=arch=compute_$(a),code=sm_$(a)) -gencode=arch=compute_$(lastword $(CUDA_ARCH)),code=compute_$(lastword $(CUDA_ARCH))
# no -lineinfo by default: it doubles the cubins, and CUDA loads a kernel's module at its first launch (lazy
# loading): 3.5-6 ms more for a process's first matrix (tests/gpu/cold_start, doc/performance.md); add it to profile.
NVCCFLAGS ?= -O3 -std=c++17 $(CUDA_GENCODE) -Xcompiler -fPIC
RPATH := -Wl,-rpath,$(abspath $(BUILD)/lib)

.PHONY: all lib tutorials tests run check check-run run-main spmv clean info setup install all64
all: lib tutorials tests

setup:
	@config/setup.sh

run: setup
	@$(MAKE) --no-print-directory run-main

check: setup
	@$(MAKE) --no-print-directory check-run

run-main: all
	$(MPIEXEC_RUN) $(BUILD)/tutorials/ex1 -mat_type ellrt -n 40 -ksp_type cg -pc_type jacobi -mat_view ::ascii_info

check-run: all
	@tests/run.sh

MPIEXEC_RUN ?=

lib: $(LIB)
tutorials: $(TUTORIALS)
tests: $(TESTS) $(ENGINE_TESTS)

$(LIB): $(OBJS)
	@mkdir -p $(dir $@)
	$(PCC_LINKER) -shared -Wl,--no-undefined -o $@ $(OBJS) $(PETSC_LIB) $(CUDA_LIBS)

$(BUILD)/obj/$(ENGINE_DIR)/%.o: $(ENGINE_DIR)/%.c $(wildcard $(ENGINE_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(PCC) -std=gnu11 -O2 -fPIC -Wall -Wextra -c $< -o $@

$(BUILD)/obj/%.o: %.c $(wildcard include/*.h src/mat/impls/ellr/*.h src/mat/utils/ellrhalo/*.h $(ENGINE_DIR)/*.h $(KSP_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(PCC) $(PCC_FLAGS) -Wall $(CCPPFLAGS) $(ELLR_CPPFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(wildcard $(ENGINE_DIR)/*.h $(ENGINE_DIR)/*.cuh $(KSP_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(ENGINE_DIR) $(if $(filter 1,$(PETSC_HAS_CUDA)),-DCGLOOP_WITH_CUSPARSE) $(if $(NCCL_INC),-DELLR_HAVE_NCCL_H -I$(NCCL_INC)) -c $< -o $@

$(BUILD)/tutorials/%: tutorials/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(PCC) $(PCC_FLAGS) $(CCPPFLAGS) -Iinclude $< -o $@ -L$(BUILD)/lib -lpetscellr $(RPATH) $(PETSC_LIB)

# the failure-injection tests call the engine's test hook (ellr.h)
$(BUILD)/tests/fail_inject: CCPPFLAGS += -I$(ENGINE_DIR)
$(BUILD)/tests/nccl_connect_fail: CCPPFLAGS += -I$(ENGINE_DIR)
$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(PCC) $(PCC_FLAGS) $(CCPPFLAGS) -Iinclude $< -o $@ -L$(BUILD)/lib -lpetscellr $(RPATH) $(PETSC_LIB)

# tests/gpu/memory (the GPU memory of an ex45 solve, read inside the process; tests/gpu/memory.sh) links PETSc alone:
# the plugin is loaded with -dll_append at run time and its query looked up by name, so that the aijcusparse and
# sellcuda runs carry none of it.  Against a PETSc without CUDA it is a stub that says so.
$(BUILD)/tests/gpu/memory: tests/gpu/memory.c
	@mkdir -p $(dir $@)
	$(PCC) $(PCC_FLAGS) $(CCPPFLAGS) $(if $(filter 1,$(PETSC_HAS_CUDA)),-I$(CUDA_DIR)/include) $< -o $@ $(PETSC_LIB) $(if $(filter 1,$(PETSC_HAS_CUDA)),-L$(CUDA_DIR)/lib64 -lcudart) -lpthread

# ---- make install PREFIX=/dir: the library, the header and a pkg-config file
#   cc $(pkg-config --cflags petscellr) prog.c $(pkg-config --libs petscellr)   (with PKG_CONFIG_PATH=/dir/lib/pkgconfig)
# PETSC_PC: how petscellr.pc names PETSc; auto = "Requires: PETSc" (or the name under which pkg-config finds
# this very PETSc), else PETSc's include and library flags written in; none = always the flags; or a name.
PREFIX      ?= /usr/local
DESTDIR     ?=
VERSION     := 0.1.0
PETSC_PC    ?= auto
install: lib
	install -d $(DESTDIR)$(abspath $(PREFIX))/lib/pkgconfig $(DESTDIR)$(abspath $(PREFIX))/include
	install -m 755 $(LIB) $(DESTDIR)$(abspath $(PREFIX))/lib/libpetscellr.so
	install -m 644 include/petscellr.h $(DESTDIR)$(abspath $(PREFIX))/include/petscellr.h
	config/petscellr-pc.sh "$(abspath $(PREFIX))" "$(VERSION)" "$(PCC)" "$(PETSC_PC)" "$(PETSC_CC_INCLUDES)" "$(PETSC_LIB)" >$(DESTDIR)$(abspath $(PREFIX))/lib/pkgconfig/petscellr.pc

# ---- 64-bit indices: the library and diff_aij against PETSC64_DIR (Debian: libpetsc64-real<V>-dev) in BUILD/64;
# tests/run.sh builds and runs them (tests diff_aij64_*).
PETSC64_DIR ?= /usr/lib/petsc64
all64:
	@test -f $(PETSC64_DIR)/lib/petsc/conf/variables || { echo "no PETSc at PETSC64_DIR=$(PETSC64_DIR) (Debian: apt-get install libpetsc64-real3.18-dev)"; exit 1; }
	$(MAKE) --no-print-directory PETSC_DIR=$(PETSC64_DIR) PETSC_ARCH= BUILD=$(BUILD)/64 lib $(BUILD)/64/tests/diff_aij

# PETSc-free engine tests: engine sources only, no PETSc, no MPI.
ENGINE_TEST_SRC := $(wildcard tests/engine/common/*.c)
$(BUILD)/tests/engine/%: tests/engine/%.c $(ENGINE_C) $(ENGINE_TEST_SRC) $(wildcard $(ENGINE_DIR)/*.h tests/engine/common/*.h)
	@mkdir -p $(dir $@)
	cc -std=gnu11 -O2 -g -Wall -Wextra -I$(ENGINE_DIR) -Itests/engine/common $< $(ENGINE_C) $(ENGINE_TEST_SRC) -o $@ -lm

# GPU programs (built here, run on the GPU machine): the engine's GPU test, the spmv benchmark and the first-matrix
# set-up probe (rebuilt when an engine header changes too: the kernels live in .cuh files).  tests/gpu/ptap_loop (GAMG's
# first P^T A P repeated in one process, for the stop described in README's Troubleshooting) is built with the tests.
GPU_PROGS := $(BUILD)/tests/engine/test_engine_cuda $(BUILD)/tests/spmv/spmv $(BUILD)/tests/spmm/spmm $(BUILD)/tests/gpu/cold_start \
             $(BUILD)/tests/gpu/loading_mode $(BUILD)/tests/gpu/bcgsloop_check $(BUILD)/tests/gpu/cgloop_check
spmv: $(GPU_PROGS)
$(BUILD)/tests/engine/test_engine_cuda: tests/engine/test_engine_cuda.cu $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu $(ENGINE_DIR)/*.cuh $(ENGINE_DIR)/*.h tests/engine/common/*.h) $(ENGINE_TEST_SRC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(ENGINE_DIR) -Itests/engine/common $< $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu) $(ENGINE_TEST_SRC) -o $@
$(BUILD)/tests/spmv/spmv: $(wildcard tests/spmv/*.cu tests/spmv/*.c tests/spmv/*.h) $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu $(ENGINE_DIR)/*.cuh $(ENGINE_DIR)/*.h tests/engine/common/*.h) $(ENGINE_TEST_SRC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(ENGINE_DIR) -Itests/engine/common $(wildcard tests/spmv/*.cu tests/spmv/*.c) $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu) $(ENGINE_TEST_SRC) -o $@ -lcusparse -lz

$(BUILD)/tests/spmm/spmm: tests/spmm/spmm.cu tests/spmv/bench_median.h $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu $(ENGINE_DIR)/*.cuh $(ENGINE_DIR)/*.h tests/engine/common/*.h) $(ENGINE_TEST_SRC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(ENGINE_DIR) -Itests/engine/common -Itests/spmv $< $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu) $(ENGINE_TEST_SRC) -o $@ -lcusparse

$(BUILD)/tests/gpu/cold_start: tests/gpu/cold_start.cu $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu $(ENGINE_DIR)/*.cuh $(ENGINE_DIR)/*.h tests/engine/common/*.h) $(ENGINE_TEST_SRC)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I$(ENGINE_DIR) -Itests/engine/common $< $(ENGINE_C) $(wildcard $(ENGINE_DIR)/*.cu) $(ENGINE_TEST_SRC) -o $@

# the BiCGStab passes on the GPU against the host's, PETSc-free
KSP_LOOP_SRC := $(KSP_DIR)/cgloop_cuda.cu $(KSP_DIR)/bcgsloop_cuda.cu $(KSP_DIR)/cgloop_host.c $(KSP_DIR)/bcgsloop_host.c
$(BUILD)/tests/gpu/bcgsloop_check: tests/gpu/bcgsloop_check.cu tests/gpu/loop_check.h $(KSP_LOOP_SRC) $(wildcard $(KSP_DIR)/*loop*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -DCGLOOP_WITH_CUSPARSE -I$(KSP_DIR) $< $(KSP_LOOP_SRC) -o $@ -lcusparse
# the CG passes along the several-ranks path on one GPU against the one-rank path, PETSc-free
$(BUILD)/tests/gpu/cgloop_check: tests/gpu/cgloop_check.cu tests/gpu/loop_check.h $(KSP_LOOP_SRC) $(wildcard $(KSP_DIR)/*loop*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -DCGLOOP_WITH_CUSPARSE -I$(KSP_DIR) $< $(KSP_LOOP_SRC) -o $@ -lcusparse

# when CUDA reads CUDA_MODULE_LOADING (README, Troubleshooting); cudaGetDriverEntryPoint is deprecated in CUDA 13
$(BUILD)/tests/gpu/loading_mode: tests/gpu/loading_mode.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Wno-deprecated-declarations $< -o $@

info:
	@echo "PETSC_DIR=$(PETSC_DIR) PETSC_ARCH=$(PETSC_ARCH) petscconf=$(PETSCCONF) PETSc has CUDA=$(PETSC_HAS_CUDA)"
	@echo "nvcc=$(NVCC) WITH_CUDA=$(WITH_CUDA) CUDA_ARCH=$(CUDA_ARCH) engine .cu: $(ENGINE_CU)"

clean:
	rm -rf $(BUILD)
