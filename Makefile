# xsa-eval build. `make` builds ./xsa-eval; `make test` builds and runs every test;
# `make asan` runs the tests under AddressSanitizer + UBSan; `make bench` builds benchmarks;
# `make demo` scores the bundled SA and XSA demo checkpoints offline (out/demo/demo.md);
# `make demo-example` regenerates the committed copy, reports/examples/demo.md.
# Sources are found by folder, so a new file needs no Makefile edit. On a fresh Debian machine
# the first build installs the packages of tools/debian-packages.txt (tools/install-deps.sh).

.DEFAULT_GOAL := all
CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
# What the build itself needs: always added, so a user's CC, CPPFLAGS, CFLAGS, LDFLAGS and
# LDLIBS (make CFLAGS=-O3) add to these instead of replacing them. SAN: sanitizer flags (asan).
XSA_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -MMD -MP $(PKG_CFLAGS) -I/usr/include/cjson
ALL_CFLAGS = $(XSA_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SAN)
ALL_LDFLAGS = $(CFLAGS) $(SAN) $(LDFLAGS)
XSA_LDLIBS = $(PKG_LIBS) $(MPI_LIBS) -lcjson -lcurl -lssl -lcrypto -lpcre2-8 -lutf8proc -lzip -lbz2 -lsnappy -lzstd -llzma -lbrotlidec -lz -lpthread -ldl -lm

# The Debian packages are checked (and installed, as root) before anything is compiled:
# $(BUILD)/deps.mk is remade first, then make rereads it with pkg-config's flags.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
include $(BUILD)/deps.mk
endif
$(BUILD)/deps.mk: tools/install-deps.sh tools/debian-packages.txt
	@bash tools/install-deps.sh
	@mkdir -p $(BUILD)
	@{ echo "PKG_CFLAGS := $$(pkg-config --cflags openblas libcjson 2>/dev/null)"; \
	   echo "PKG_LIBS := $$(pkg-config --libs openblas 2>/dev/null || echo -lopenblas)"; } > $@.tmp && mv $@.tmp $@

# Data-parallel runs (eval/dist.h): eval/dist_mpi.c when Open MPI's compiler wrapper or
# pkg-config is here, else eval/dist_none.c (same interface, one process). `make MPI=0` builds
# without it; use another BUILD folder when switching (make MPI=0 BUILD=build-nompi).
MPI ?= $(shell { command -v mpicc || pkg-config --exists ompi-c; } >/dev/null 2>&1 && echo 1 || echo 0)
ifeq ($(MPI),1)
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile)
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link)
DIST_SKIP  := eval/dist_none.c
$(BUILD)/eval/dist_mpi.o: XSA_CFLAGS += $(MPI_CFLAGS)
else
DIST_SKIP  := eval/dist_mpi.c
endif
LIB_DIRS := common data tasks model kernels kernels/cpu eval reports cli
LIB_SRC  := $(filter-out cli/main.c $(DIST_SKIP),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
# The archive is remade when MPI changes (its member list does).
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(BUILD) && { echo $(MPI) | cmp -s - $(BUILD)/mpi.flag || echo $(MPI) > $(BUILD)/mpi.flag; })
endif
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:%.c=$(BUILD)/%)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:%.c=$(BUILD)/%)

# The CUDA backend is a shared object opened at run time, so the binary runs without a GPU.
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_SRC := $(wildcard kernels/cuda/*.cu)
ifneq ($(NVCC),)
ifneq ($(CUDA_SRC),)
CUDA_SO := $(BUILD)/libxsa_cuda.so
endif
endif

.PHONY: all test asan bench demo demo-example clean xsa-eval-asan test-asan
.SECONDARY:
all: xsa-eval $(CUDA_SO)

xsa-eval: $(BUILD)/cli/main.o $(BUILD)/libxsa.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(XSA_LDLIBS) $(LDLIBS)

# The same binary inside the build folder, e.g. without MPI beside the default one:
# make MPI=0 BUILD=build-nompi build-nompi/xsa-eval
$(BUILD)/xsa-eval: $(BUILD)/cli/main.o $(BUILD)/libxsa.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(XSA_LDLIBS) $(LDLIBS)

$(BUILD)/libxsa.a: $(LIB_OBJ) $(BUILD)/mpi.flag
	@rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

TEST_LIB := $(BUILD)/tests/check.o $(BUILD)/tests/fixture_io.o
$(BUILD)/tests/test_%: tests/test_%.c $(TEST_LIB) $(BUILD)/libxsa.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(TEST_LIB) $(BUILD)/libxsa.a $(XSA_LDLIBS) $(LDLIBS)

$(BUILD)/bench/bench_%: bench/bench_%.c $(BUILD)/libxsa.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libxsa.a $(XSA_LDLIBS) $(LDLIBS)

ifneq ($(CUDA_SO),)
# One object per .cu file (each launches only its own kernels), so touching one kernel
# recompiles one file; -MMD -MP lists the headers each includes.
NVCCFLAGS ?= -O3 -std=c++17 -Xcompiler -Wall,-Wextra -Werror all-warnings \
             -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
CUDA_OBJ := $(CUDA_SRC:%.cu=$(BUILD)/%.o)
$(BUILD)/kernels/cuda/%.o: kernels/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -I. -Xcompiler -fPIC -MMD -MP -c -o $@ $<
$(CUDA_SO): $(CUDA_OBJ)
	$(NVCC) $(NVCCFLAGS) -shared -o $@ $^ -lcublas -lcublasLt
-include $(CUDA_OBJ:.o=.d)
endif

# The fuzz harnesses, compiled and linked by gcc with a main that never calls them: a harness
# that no longer builds fails `make test` (tests/fuzz/build.sh makes the real fuzzers with clang).
FUZZ_LINK := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz-link/%,$(filter-out tests/fuzz/link_main.c,$(wildcard tests/fuzz/*.c)))
$(BUILD)/fuzz-link/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/link_main.c $(BUILD)/libxsa.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/link_main.c $(BUILD)/libxsa.a $(XSA_LDLIBS) $(LDLIBS)

test: xsa-eval $(TEST_BIN) $(FUZZ_LINK)
	XSA_BIN=./xsa-eval BUILD=$(BUILD) bash tests/run.sh

# Sanitizers: a separate build tree; the test runner uses its binaries.
asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    xsa-eval-asan test-asan

xsa-eval-asan: $(BUILD)/cli/main.o $(BUILD)/libxsa.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(XSA_LDLIBS) $(LDLIBS)

test-asan: xsa-eval-asan $(TEST_BIN)
	ASAN_OPTIONS=detect_leaks=1 XSA_BIN=./xsa-eval-asan BUILD=$(BUILD) bash tests/run.sh

bench: $(BENCH_BIN)

demo: xsa-eval
	bash tools/demo.sh

demo-example: xsa-eval
	DEMO_REPORT=reports/examples/demo.md bash tools/demo.sh

clean:
	rm -rf build build-asan xsa-eval xsa-eval-asan

-include $(LIB_OBJ:.o=.d) $(BUILD)/cli/main.d
