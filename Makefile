# pg_warp — top-level build.
#
#   make            extension (PGXS), the pgwarp tool, unit tests, CUDA code
#   make install    installs the extension and pgwarp into PostgreSQL's dirs
#   make test       installs dependencies, builds, runs every test suite
#   make demo       installs dependencies, builds, runs the demo job
#
# The pure-C Arrow library (src/arrow) is compiled twice: into the extension
# with PGXS's flags (-fPIC), and into build/ for the tool and the tests.

EXTENSION   = pg_warp
MODULE_big  = pg_warp
DATA        = $(wildcard sql/pg_warp--*.sql)
PGFILEDESC  = "pg_warp - GPU-accelerated analytics over Arrow files"

# the Parquet reader (src/parquet) is part of the same library: ArrowFile
# opens Parquet files through it
ARROW_SRCS  = $(sort $(wildcard src/arrow/*.c src/parquet/*.c))
PG_SRCS     = $(sort $(wildcard src/pg/*.c src/pg/*/*.c))
ENGINE_SRCS = $(sort $(wildcard src/engine/*.c))
# the daemon protocol is shared by the extension (client) and pg_warp_gpud
WIRE_SRCS   = src/gpud/gpud_wire.c
OBJS        = $(PG_SRCS:.c=.o) $(ARROW_SRCS:.c=.o) $(ENGINE_SRCS:.c=.o) $(WIRE_SRCS:.c=.o)
PG_CPPFLAGS = -Isrc -Isrc/pg -Isrc/arrow -Isrc/parquet -Isrc/engine -Isrc/gpud
# codecs: Arrow (lz4, zstd) and Parquet (also snappy, zlib, brotli)
PARQUET_LIBS = -lsnappy -lz -lbrotlidec
SHLIB_LINK  = -llz4 -lzstd $(PARQUET_LIBS) -lpthread
EXTRA_CLEAN = build

PG_CONFIG  ?= pg_config
# `make test` and `make demo` install the build dependencies (PGXS among
# them) before building, so they must not need PGXS themselves.
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out test demo deps installcheck-gpu,$(MAKECMDGOALS)),)
SKIP_PGXS = 1
endif
endif
ifndef SKIP_PGXS
PGXS       := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
# PGXS does not track headers: any header change rebuilds the extension
$(OBJS): $(wildcard src/pg/*.h src/pg/*/*.h src/arrow/*.h src/parquet/*.h src/engine/*.h src/gpud/*.h)
endif

# ---------------------------------------------------------------- tool etc.
B          := build
TOOL_CC    ?= gcc
TOOL_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
              -Wno-missing-field-initializers -D_GNU_SOURCE -Isrc -Isrc/arrow -Isrc/parquet -Isrc/engine -Isrc/gpud \
              -I$(shell $(PG_CONFIG) --includedir)
TOOL_LIBS   = -L$(shell $(PG_CONFIG) --libdir) -lpq -llz4 -lzstd $(PARQUET_LIBS) -lm -lpthread

ARROW_TOBJS = $(patsubst src/%.c,$(B)/obj/%.o,$(ARROW_SRCS))
TOOL_SRCS   = $(sort $(wildcard src/tool/*.c))
TOOL_OBJS   = $(patsubst src/%.c,$(B)/obj/%.o,$(TOOL_SRCS))
UNIT_SRCS   = $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS   = $(patsubst test/unit/%.c,$(B)/unit/%,$(UNIT_SRCS))
ENGINE_HDRS = $(wildcard src/engine/*.h)

ENGINE_TOBJS = $(patsubst src/%.c,$(B)/obj/%.o,$(ENGINE_SRCS))

$(B)/obj/%.o: src/%.c $(wildcard src/arrow/*.h src/parquet/*.h src/tool/*.h src/engine/*.h src/gpud/*.h)
	@mkdir -p $(dir $@)
	$(TOOL_CC) $(TOOL_CFLAGS) -c -o $@ $<

$(B)/libwarparrow.a: $(ARROW_TOBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/libwarpengine.a: $(ENGINE_TOBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/pgwarp: $(TOOL_OBJS) $(B)/libwarparrow.a
	$(TOOL_CC) -o $@ $(TOOL_OBJS) $(B)/libwarparrow.a $(TOOL_LIBS)

UNIT_GPUD   = $(B)/obj/gpud/gpud_wire.o $(B)/obj/gpud/gpud_colcache.o $(B)/obj/gpud/gpud_prefetch.o \
              $(B)/obj/gpud/gpud_pinpool.o $(B)/obj/gpud/gpud_decoded.o $(B)/obj/gpud/gpud_files.o

$(B)/unit/%: test/unit/%.c $(wildcard test/unit/*.h) $(ENGINE_HDRS) $(B)/libwarpengine.a $(B)/libwarparrow.a $(UNIT_GPUD)
	@mkdir -p $(dir $@)
	$(TOOL_CC) $(TOOL_CFLAGS) -Itest/unit -o $@ $< $(UNIT_GPUD) $(B)/libwarpengine.a \
	    $(B)/libwarparrow.a $(TOOL_LIBS) -lbrotlienc

BENCH_SRCS  = $(sort $(wildcard bench/*.c))
BENCH_BINS  = $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))

$(B)/bench/%: bench/%.c $(B)/libwarparrow.a
	@mkdir -p $(dir $@)
	$(TOOL_CC) $(TOOL_CFLAGS) -O3 -march=x86-64-v2 -o $@ $< $(B)/libwarparrow.a $(TOOL_LIBS)

# CUDA sources must compile everywhere (CI has nvcc but no GPU).
# The toolkit: $(CUDA_HOME) when set, else nvcc on PATH, else /usr/local/cuda,
# else the one scripts/deps.sh installs from PyPI into .cuda/ (scripts/cuda_home.sh)
NVCC       ?= $(or $(shell bash scripts/cuda_home.sh),/usr/local/cuda)/bin/nvcc
# SASS for Turing (sm_75) through Hopper (sm_90), plus sm_90 PTX for newer
# GPUs: the database server needs the NVIDIA driver, not the CUDA toolkit.
CUDA_ARCH  ?= $(foreach a,75 80 86 89 90,-gencode arch=compute_$(a),code=sm_$(a)) \
              -gencode arch=compute_90,code=compute_90
CU_SRCS     = $(sort $(wildcard src/gpucheck/*.cu))
CU_BINS     = $(patsubst src/gpucheck/%.cu,$(B)/gpucheck/%,$(CU_SRCS))

$(B)/gpucheck/%: src/gpucheck/%.cu $(ENGINE_HDRS) src/gpud/gpud_clock.h
	@mkdir -p $(dir $@)
	$(NVCC) -O2 $(CUDA_ARCH) -Isrc -Isrc/arrow -o $@ $< -cudart static

# the spatial probe's self-test indexes its build side with the engine's grid
$(B)/gpucheck/geom_selftest: src/gpucheck/geom_selftest.cu $(ENGINE_HDRS) $(B)/libwarpengine.a
	@mkdir -p $(dir $@)
	$(NVCC) -O2 $(CUDA_ARCH) -Isrc -Isrc/arrow -o $@ $< $(B)/libwarpengine.a -cudart static

# pg_warp_gpud: the daemon (C) with the device driver (CUDA, runtime linked
# statically: the server needs the NVIDIA driver, not the toolkit)
GPUD_SRCS   = $(sort $(wildcard src/gpud/*.c))
GPUD_CU_SRCS = $(sort $(wildcard src/gpud/*.cu))
GPUD_CU_OBJS = $(patsubst src/%.cu,$(B)/obj/%.o,$(GPUD_CU_SRCS))
GPUD_OBJS   = $(patsubst src/%.c,$(B)/obj/%.o,$(GPUD_SRCS)) $(GPUD_CU_OBJS)

$(GPUD_CU_OBJS): $(B)/obj/gpud/%.o: src/gpud/%.cu $(wildcard src/gpud/*.h) $(ENGINE_HDRS)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH) -Isrc -Isrc/arrow -Isrc/parquet -Isrc/engine -Isrc/gpud -c -o $@ $<

$(B)/pg_warp_gpud: $(GPUD_OBJS) $(B)/libwarpengine.a $(B)/libwarparrow.a
	$(NVCC) -o $@ $(GPUD_OBJS) $(B)/libwarpengine.a $(B)/libwarparrow.a -cudart static \
	    -llz4 -lzstd $(PARQUET_LIBS) -lm -lpthread -ldl -lrt

gpud: $(B)/pg_warp_gpud
tool: $(B)/pgwarp
unit: $(UNIT_BINS) $(B)/unit/engine_ops_cli $(B)/unit/test_fuzz_corpus
gpu: $(CU_BINS)
bench: $(BENCH_BINS)
all: tool unit gpu gpud bench

install: install-tool
install-tool: $(B)/pgwarp $(B)/gpucheck/pgwarp_gpu_probe $(B)/pg_warp_gpud
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(B)/pgwarp '$(DESTDIR)$(bindir)/pgwarp'
	$(INSTALL_PROGRAM) $(B)/pg_warp_gpud '$(DESTDIR)$(bindir)/pg_warp_gpud'
	$(INSTALL_PROGRAM) $(B)/gpucheck/pgwarp_gpu_probe '$(DESTDIR)$(bindir)/'

# libFuzzer target for the reader (clang).
FUZZ_CC    ?= clang
$(B)/fuzz/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/fuzz_reader.c $(ARROW_SRCS) src/arrow/arrow.h $(wildcard src/parquet/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -D_GNU_SOURCE -Isrc/arrow -Isrc/parquet \
	    -o $@ $< $(ARROW_SRCS) -llz4 -lzstd $(PARQUET_LIBS) -lm
fuzz: $(B)/fuzz/fuzz_reader $(B)/fuzz/fuzz_parquet $(B)/fuzz/fuzz_stream

# The corpora as a regression test: every kept input through its target's
# entry point, with ASan and UBSan where the compiler links them.
FUZZ_SAN   := $(shell echo 'int main(void){return 0;}' | $(TOOL_CC) -fsanitize=address,undefined \
                -x c - -o /dev/null 2>/dev/null && echo -fsanitize=address,undefined -fno-sanitize-recover=undefined)
$(B)/unit/test_fuzz_corpus: test/fuzz/replay.c $(wildcard test/fuzz/fuzz_*.c) $(ARROW_SRCS) \
        src/arrow/arrow.h $(wildcard src/parquet/*.h)
	@mkdir -p $(dir $@)
	$(TOOL_CC) -std=gnu11 -g -O1 $(FUZZ_SAN) -fno-omit-frame-pointer -D_GNU_SOURCE -Isrc/arrow \
	    -Isrc/parquet -Itest/fuzz -o $@ $< $(ARROW_SRCS) -llz4 -lzstd $(PARQUET_LIBS) -lm

deps:
	bash scripts/deps.sh
test:
	bash scripts/test.sh
demo:
	bash scripts/demo.sh
# on a GPU machine, against a running cluster (see scripts/installcheck_gpu.sh)
installcheck-gpu:
	bash scripts/installcheck_gpu.sh

.PHONY: bench tool unit gpu gpud install-tool deps test demo fuzz installcheck-gpu
