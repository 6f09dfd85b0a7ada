# kgb build. `make` builds the release binaries into build/bin; `make SAN=1` builds the
# AddressSanitizer + UndefinedBehaviorSanitizer variant into build/san/bin.
# Every directory's sources are picked up by wildcard: adding a file needs no edit here.

CC      ?= cc
SAN     ?= 0
PREFIX  ?= /usr/local

ifeq ($(SAN),1)
  B      := build/san
  # float-cast-overflow is not part of gcc's -fsanitize=undefined: a double out of an
  # integer's range converted to it must be caught too
  SANFL  := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined,float-cast-overflow
  OPT    := -O1
else
  B      := build/rel
  SANFL  :=
  OPT    := -O2
endif

GEN      := build/gen
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.1.0)
CPPFLAGS += -Iinclude -Icommon -I$(GEN) -Iworker -D_GNU_SOURCE -DKGB_VERSION='"$(VERSION)"' \
            -DCL_TARGET_OPENCL_VERSION=120 -I/usr/include/x86_64-linux-gnu/openblas-pthread
CFLAGS   ?= $(OPT) -g
# -fPIC: the common objects go into both libkgbcommon.a (the daemons) and libkgb.so
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers -fno-strict-aliasing \
            -fPIC -pthread -MMD -MP $(SANFL)
LDFLAGS  += -pthread $(SANFL)

PROTO_C  := $(GEN)/proto/kgb.pb-c.c
PROTO_H  := $(GEN)/proto/kgb.pb-c.h

COMMON_SRC := $(wildcard common/*.c common/ops/*.c)
WORKER_SRC := $(wildcard worker/*.c worker/backends/*.c)
COORD_SRC  := $(wildcard coordinator/*.c)
CLI_SRC    := $(wildcard cli/*.c)
UNIT_SRC   := $(wildcard tests/unit/*.c)
MIGRATIONS := $(sort $(wildcard coordinator/migrations/*.sql))

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

COMMON_OBJ := $(call obj,$(COMMON_SRC)) $(B)/obj/gen/kgb.pb-c.o
WORKER_OBJ := $(call obj,$(WORKER_SRC))
COORD_OBJ  := $(call obj,$(COORD_SRC)) $(B)/obj/gen/migrations.o
CLI_OBJ    := $(call obj,$(CLI_SRC))
UNIT_OBJ   := $(call obj,$(UNIT_SRC))
# the unit tests link the worker's and coordinator's objects except their main()s
WORKER_LIB_OBJ := $(filter-out %/worker/main.o,$(WORKER_OBJ))
COORD_LIB_OBJ  := $(filter-out %/coordinator/main.o,$(COORD_OBJ))
CLI_LIB_OBJ    := $(filter-out %/cli/main.o,$(CLI_OBJ))

LIBCOMMON := $(B)/libkgbcommon.a
# libsodium: SHA-256 and base64 (every binary has it through libzmq already)
LIBS_COMMON := -lprotobuf-c -ljansson -lsodium -lopenblas -lm -ldl
# the tools (what `make install` ships and the integration tests run) and the unit tests
TOOLS := $(B)/bin/kgb-coordinator $(B)/bin/kgb-worker $(B)/bin/kgb
BINS := $(TOOLS) $(B)/bin/kgb-unit

# libkgb.so: the catalog, inputs, references, validator and sampler behind the public C
# API of include/kgb.h (common/api.c); only kgb_lib_* symbols are exported.
LIBKGB_SRC := $(addprefix common/,api.c catalog.c dtype.c expr.c log.c util.c validate.c stats.c) \
              $(wildcard common/ops/*.c)
LIBKGB     := $(B)/lib/libkgb.so

.PHONY: all tools deps demo test test-slow test-full check-layers test-unit test-integration test-san clean install bench man cli-docs
all: tools $(B)/bin/kgb-unit
ifeq ($(SAN),0)
	@ln -sf ../../$(B)/bin/kgb-unit build/bin/
endif

# the binaries and libkgb.so without the unit tests (make test needs kgb-unit only from
# the sanitizer build)
tools: $(TOOLS) $(LIBKGB)
ifeq ($(SAN),0)
	@mkdir -p build/bin build/lib && for f in $(TOOLS); do ln -sf ../../$$f build/bin/; done
	@ln -sf ../../$(LIBKGB) build/lib/
endif

$(GEN)/proto/kgb.pb-c.c $(GEN)/proto/kgb.pb-c.h: proto/kgb.proto
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) $<

$(GEN)/migrations.c: $(MIGRATIONS) scripts/embed-migrations.sh
	@mkdir -p $(GEN)
	sh scripts/embed-migrations.sh $(MIGRATIONS) > $@

# every object depends on the generated header so the first build orders itself, and on
# this Makefile so that a change of flags rebuilds it
$(B)/obj/%.o: %.c $(PROTO_H) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/obj/gen/kgb.pb-c.o: $(PROTO_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(filter-out -Werror,$(CFLAGS)) -c $< -o $@

$(B)/obj/gen/migrations.o: $(GEN)/migrations.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icoordinator $(CFLAGS) -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/bin/kgb-worker: $(WORKER_OBJ) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lzmq $(LIBS_COMMON)

$(B)/bin/kgb-coordinator: $(COORD_OBJ) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -luv -lzmq -lpq -lmicrohttpd $(LIBS_COMMON)

$(B)/bin/kgb: $(CLI_OBJ) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lzmq -lcurl $(LIBS_COMMON)

$(B)/bin/kgb-unit: $(UNIT_OBJ) $(WORKER_LIB_OBJ) $(COORD_LIB_OBJ) $(CLI_LIB_OBJ) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -luv -lzmq -lpq -lmicrohttpd -lcurl $(LIBS_COMMON)

$(LIBKGB): $(call obj,$(LIBKGB_SRC)) scripts/libkgb.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared \
		-Wl,--version-script=scripts/libkgb.map -Wl,--no-undefined -o $@ \
		$(call obj,$(LIBKGB_SRC)) -lsodium -lopenblas -lm -ldl

deps:
	sh scripts/deps.sh

demo:
	sh scripts/deps.sh --check-or-install
	$(MAKE) all
	sh scripts/demo.sh

# every step prints its wall time (scripts/step.sh); tests/run.sh ends with the ten
# slowest tests
test:
	@sh scripts/step.sh dependencies sh scripts/deps.sh --check-or-install
	@sh scripts/step.sh layers $(MAKE) -s check-layers
	+@sh scripts/step.sh "release build" $(MAKE) tools
	+@sh scripts/step.sh "sanitizer build" $(MAKE) SAN=1 all
	@sh scripts/step.sh tests sh tests/run.sh

# no file of coordinator/ calls into a layer above its own, nor in a circle
# (docs/architecture.md); then the check's own test
check-layers:
	sh scripts/check-layers.sh
	sh tests/tools/check_layers_test.sh

# everything `make test` runs, every test on the sanitizer binaries (make test runs the
# examples on the release build, but for a slice of them under the sanitizers) and
# in its slow form (all 70 ATen examples, all nineteen overload operators, every shipped
# Triton plan): on demand, where a machine has a few hours
test-full:
	+@sh scripts/step.sh "release build" $(MAKE) all
	+@sh scripts/step.sh "sanitizer build" $(MAKE) SAN=1 all
	@sh scripts/step.sh tests env KGB_TEST_SAN_ONLY=1 KGB_SLOW_TESTS=1 KGB_TEST_TIMEOUT=5400 sh tests/run.sh

# every shipped example, including the slow ones (all nineteen overload operators, every
# shipped Triton plan compiled by kgb validate)
test-slow:
	$(MAKE) all
	$(MAKE) SAN=1 all
	KGB_SLOW_TESTS=1 KGB_TEST_TIMEOUT=5400 sh tests/run.sh aten_examples aten_overloads validate_triton

test-unit: all
	$(B)/bin/kgb-unit

# scale of one coordinator with simulated workers (scripts/bench-scale.sh; figures in
# docs/scheduler.md)
bench: all
	bash scripts/bench-scale.sh

clean:
	rm -rf build

# the kgb command's man pages (man/kgb.1, man/kgb-COMMAND.1) and docs/cli.md's command
# reference, both generated from its help text (scripts/cli-docs.sh)
man: tools
	sh scripts/cli-docs.sh --man build/rel/bin/kgb man
cli-docs: tools
	sh scripts/cli-docs.sh build/rel/bin/kgb

# The layout the worker looks for next to its binary (docs/deploy.md, "What the worker
# finds next to its binary"): the Triton helper and the recorder of Python candidates
# (with the PyTorch provider it loads) in libexec/kgb, the kgb Python package in
# share/kgb/python (the native torch baseline).
install: tools
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/kgb/pyrec
	install -m 755 build/rel/bin/kgb build/rel/bin/kgb-coordinator build/rel/bin/kgb-worker $(DESTDIR)$(PREFIX)/bin/
	install -m 644 worker/triton_compile.py $(DESTDIR)$(PREFIX)/libexec/kgb/
	install -m 644 worker/pyrec/*.py python/kgb/providers/torch_aten.py $(DESTDIR)$(PREFIX)/libexec/kgb/pyrec/
	install -d $(DESTDIR)$(PREFIX)/share/kgb/python/kgb/providers
	install -m 644 python/kgb/*.py $(DESTDIR)$(PREFIX)/share/kgb/python/kgb/
	install -m 644 python/kgb/providers/*.py $(DESTDIR)$(PREFIX)/share/kgb/python/kgb/providers/
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 build/rel/lib/libkgb.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/kgb.h $(DESTDIR)$(PREFIX)/include/
	sh scripts/cli-docs.sh --man build/rel/bin/kgb $(DESTDIR)$(PREFIX)/share/man/man1

-include $(shell find build/rel/obj build/san/obj -name '*.d' 2>/dev/null)

# libFuzzer targets (needs clang; not part of `all`): frames, manifests and plans, plan
# expressions. Run one: build/fuzz/fuzz_expr tests/fuzz/corpus/expr. `make fuzz-ci`
# runs each for FUZZ_SECONDS over a scratch copy of its corpus (the repository's corpus
# is the seed set) and fails on any finding; tests/run.sh calls it.
FUZZ_CC      ?= clang
FUZZ_FLAGS   ?= -g -O1 -fsanitize=fuzzer,address,undefined,float-cast-overflow \
                -fno-sanitize-recover=undefined,float-cast-overflow -fno-omit-frame-pointer
FUZZ_SECONDS ?= 20
FUZZERS := build/fuzz/fuzz_wire build/fuzz/fuzz_manifest build/fuzz/fuzz_expr
.PHONY: fuzz fuzz-ci
fuzz: $(FUZZERS)
build/fuzz/fuzz_wire: tests/fuzz/fuzz_wire.c common/wire.c common/util.c $(PROTO_C) $(PROTO_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -pthread $(FUZZ_FLAGS) -o $@ $< common/wire.c common/util.c \
		$(PROTO_C) -lzmq -lprotobuf-c -lsodium -lm
build/fuzz/fuzz_manifest: tests/fuzz/fuzz_manifest.c $(COMMON_SRC) $(PROTO_C) $(PROTO_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -pthread $(FUZZ_FLAGS) -o $@ $< $(COMMON_SRC) $(PROTO_C) \
		-lzmq $(LIBS_COMMON)
build/fuzz/fuzz_expr: tests/fuzz/fuzz_expr.c common/expr.c common/util.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -pthread $(FUZZ_FLAGS) -o $@ $< common/expr.c common/util.c -lsodium -lm
fuzz-ci: $(FUZZERS)
	@for f in $(FUZZERS); do \
		n=$$(basename $$f | sed 's/^fuzz_//'); \
		d=build/fuzz/work-$$n; rm -rf $$d; mkdir -p $$d/corpus; \
		cp tests/fuzz/corpus/$$n/* $$d/corpus/; \
		echo "== $$f for $(FUZZ_SECONDS) s (seed corpus tests/fuzz/corpus/$$n)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$$d/ \
			-print_final_stats=1 $$d/corpus >$$d/log 2>&1 || { tail -n 40 $$d/log; echo "$$f: finding in $$d"; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' $$d/log | tr '\n' ' '; \
		grep -Eo 'cov: [0-9]+' $$d/log | tail -n1; \
	done

# Test doubles for vendor runtimes that are absent here (tests/doubles/): small shared
# libraries the HIP and Level Zero backends load through KGB_HIP_LIBRARY /
# KGB_ZE_LIBRARY in the unit tests. kgb-unit finds them in $(B)/lib.
DOUBLES := $(B)/lib/libfakehip.so $(B)/lib/libfakehip5.so $(B)/lib/libfakeze.so
DOUBLES += $(B)/lib/libfakehipblas.so
DOUBLE_CFLAGS := -std=gnu11 $(OPT) -g -Wall -Wextra -Werror -fPIC -shared -pthread $(SANFL)
.PHONY: doubles
doubles: $(DOUBLES)
$(B)/bin/kgb-unit: | $(DOUBLES)
$(B)/lib/libfakehip.so: tests/doubles/fake_hip.c tests/doubles/fake_common.h worker/backends/hip_api.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_CFLAGS) -o $@ $<
$(B)/lib/libfakehip5.so: tests/doubles/fake_hip.c tests/doubles/fake_common.h worker/backends/hip_api.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_CFLAGS) -DFAKE_HIP_ROCM5 -o $@ $<
$(B)/lib/libfakeze.so: tests/doubles/fake_ze.c tests/doubles/fake_common.h worker/backends/ze_api.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_CFLAGS) -o $@ $<
$(B)/lib/libfakehipblas.so: tests/doubles/fake_hipblas.c
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_CFLAGS) -o $@ $< -lm
