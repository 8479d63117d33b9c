# xsa-eval build. `make` builds ./xsa-eval; `make test` builds and runs every test;
# `make asan` runs the tests under AddressSanitizer + UBSan; `make bench` builds benchmarks;
# `make demo` scores the bundled SA and XSA demo checkpoints offline (out/demo/demo.md);
# `make demo-example` regenerates the committed copy, reports/examples/demo.md.
# Sources are found by folder, so a new file needs no Makefile edit.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -MMD -MP
CFLAGS  += $(shell pkg-config --cflags openblas libcjson 2>/dev/null) -I/usr/include/cjson
LDLIBS  += $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
LDLIBS  += -lcjson -lcurl -lssl -lcrypto -lpcre2-8 -lutf8proc -lzip -lbz2 -lpthread -ldl -lm

LIB_DIRS := common model kernels kernels/cpu tasks eval data reports
LIB_SRC  := $(filter-out eval/main.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
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

xsa-eval: $(BUILD)/eval/main.o $(BUILD)/libxsa.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libxsa.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

TEST_LIB := $(BUILD)/tests/check.o $(BUILD)/tests/fixture_io.o
$(BUILD)/tests/test_%: tests/test_%.c $(TEST_LIB) $(BUILD)/libxsa.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TEST_LIB) $(BUILD)/libxsa.a $(LDLIBS)

$(BUILD)/bench/bench_%: bench/bench_%.c $(BUILD)/libxsa.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libxsa.a $(LDLIBS)

ifneq ($(CUDA_SO),)
NVCCFLAGS ?= -O3 -std=c++17 -Xcompiler -fPIC,-Wall,-Wextra -Werror all-warnings -I. \
             -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
$(CUDA_SO): $(CUDA_SRC) $(wildcard kernels/cuda/*.h kernels/cuda/*.cuh) kernels/backend.h model/model.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -shared -o $@ $(CUDA_SRC) -lcublas -lcublasLt
endif

test: xsa-eval $(TEST_BIN)
	XSA_BIN=./xsa-eval BUILD=$(BUILD) bash tests/run.sh

# Sanitizers: a separate build tree; the test runner uses its binaries.
asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    xsa-eval-asan test-asan

xsa-eval-asan: $(BUILD)/eval/main.o $(BUILD)/libxsa.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

test-asan: xsa-eval-asan $(TEST_BIN)
	ASAN_OPTIONS=detect_leaks=1 XSA_BIN=./xsa-eval-asan BUILD=$(BUILD) bash tests/run.sh

bench: $(BENCH_BIN)

demo: xsa-eval
	bash tools/demo.sh

demo-example: xsa-eval
	DEMO_REPORT=reports/examples/demo.md bash tools/demo.sh

clean:
	rm -rf build build-asan xsa-eval xsa-eval-asan

-include $(LIB_OBJ:.o=.d) $(BUILD)/eval/main.d
