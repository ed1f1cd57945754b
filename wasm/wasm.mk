# wasm/wasm.mk — the webdlpack C library: wasm builds (emcc), the layout probe
# and the native tests. Included by the top Makefile (`-include wasm/wasm.mk`);
# also usable alone: `make -f wasm/wasm.mk test-c`.
#
#   WASM_TARGETS   what `make build` produces:
#     wasm/build/libwebdlpack.so   side module (emcc -fPIC -sSIDE_MODULE=1) that Pyodide loads
#     wasm/build/libwebdlpack.a    static library (PIC objects) for frameworks that link it
#     build/layout/wasm32.json     sizes/offsets of the ABI structs as emcc lays them out
#   test-c         native tests (gcc + ASan/UBSan) → build/test-results/c.xml, after
#                  test-c-dlpack-compat (upstream dlpack.h and webdlpack.h, both orders)

EMCC ?= emcc
EMAR ?= emar
CC_NATIVE ?= gcc
CXX_NATIVE ?= g++
EMXX ?= em++

WDL_SRC := $(sort $(wildcard wasm/src/*.c))
WDL_HDR := $(wildcard wasm/include/webdlpack/*.h) $(wildcard wasm/src/*.h)
WDL_OUT := wasm/build
WDL_OBJ := $(patsubst wasm/src/%.c,$(WDL_OUT)/obj/%.o,$(WDL_SRC))
WDL_CFLAGS := -std=c11 -Wall -Wextra -Werror -Iwasm/include
# Exports keep i64 arguments as BigInt (no legalization), as Pyodide's
# runtime (emscripten 5, WASM_BIGINT) expects.
WDL_EMFLAGS := -O2 -fPIC
WDL_EMLINK := -sWASM_BIGINT=1

WDL_TEST_SRC := $(sort $(wildcard tests/c/*.c))
WDL_TEST_HDR := $(wildcard tests/c/*.h)
WDL_TEST_BIN := build/tests-c/webdlpack_tests
WDL_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# The README's C example (examples/c_webgpu_tensor.c): linked into the native tests, and
# built with the library into one side module that the browser test loads into Pyodide.
WDL_EXAMPLE_SRC := examples/c_webgpu_tensor.c
WDL_EXAMPLE_SO := $(WDL_OUT)/examples/c_webgpu_tensor.so

# Upstream DLPack (dmlc dlpack.h 1.x) for the include-order tests: the header the
# apache-tvm-ffi wheel ships (a pinned dev dependency), located by the package itself.
WDL_PY ?= .venv/bin/python
DLPACK_UPSTREAM_INC = $(eval DLPACK_UPSTREAM_INC := $$(shell $(WDL_PY) -c \
  'import tvm_ffi.libinfo as i; print(i.find_dlpack_include_path())' 2>/dev/null))$(DLPACK_UPSTREAM_INC)
WDL_UPSTREAM_CHECK = $(if $(wildcard $(DLPACK_UPSTREAM_INC)/dlpack/dlpack.h),,$(error upstream dlpack.h not found: \
  install the dev dependencies (pip install -e '.[dev]' brings apache-tvm-ffi)))
WDL_ORDER_SRC := $(wildcard tests/c/test_dlpack_order_*.c)

WASM_TARGETS := $(WDL_OUT)/libwebdlpack.so $(WDL_OUT)/libwebdlpack.a build/layout/wasm32.json $(WDL_EXAMPLE_SO)

.PHONY: wasm test-c test-c-dlpack-compat wasm-clean

wasm: $(WASM_TARGETS)

$(WDL_OUT)/libwebdlpack.so: $(WDL_SRC) $(WDL_HDR)
	@mkdir -p $(@D)
	$(EMCC) $(WDL_CFLAGS) $(WDL_EMFLAGS) $(WDL_EMLINK) -sSIDE_MODULE=1 $(WDL_SRC) -o $@

$(WDL_EXAMPLE_SO): $(WDL_SRC) $(WDL_HDR) $(WDL_EXAMPLE_SRC)
	@mkdir -p $(@D)
	$(EMCC) $(WDL_CFLAGS) $(WDL_EMFLAGS) $(WDL_EMLINK) -sSIDE_MODULE=1 $(WDL_SRC) $(WDL_EXAMPLE_SRC) -o $@

$(WDL_OUT)/obj/%.o: wasm/src/%.c $(WDL_HDR)
	@mkdir -p $(@D)
	$(EMCC) $(WDL_CFLAGS) $(WDL_EMFLAGS) -c $< -o $@

$(WDL_OUT)/libwebdlpack.a: $(WDL_OBJ)
	@rm -f $@
	$(EMAR) rcs $@ $^

# The probe is a tiny emscripten program run by node; it prints the layout JSON.
build/layout/wasm32.json: wasm/tools/layout_probe.c $(WDL_HDR)
	@mkdir -p $(@D) build/layout/probe
	@echo '{"type": "commonjs"}' > build/layout/probe/package.json  # the repo's package.json says ESM
	$(EMCC) $(WDL_CFLAGS) -O1 -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 $< -o build/layout/probe/layout_probe.js
	node build/layout/probe/layout_probe.js > $@.tmp
	node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' $@.tmp
	mv $@.tmp $@

# spec/validation-rules.json (the rule set C, JS and Python are each tested against) as a C table.
WDL_RULES_INC := build/generated/validation_rules.inc
$(WDL_RULES_INC): spec/validation-rules.json scripts/gen_validation_rules_c.py
	@mkdir -p $(@D)
	python3 scripts/gen_validation_rules_c.py $< $@

$(WDL_TEST_BIN): $(WDL_SRC) $(WDL_HDR) $(WDL_TEST_SRC) $(WDL_TEST_HDR) $(WDL_EXAMPLE_SRC) $(WDL_RULES_INC)
	$(WDL_UPSTREAM_CHECK)
	@mkdir -p $(@D)
	$(CC_NATIVE) $(WDL_CFLAGS) -g -O1 $(WDL_SANITIZE) -Iwasm/src -Itests/c -I$(dir $(WDL_RULES_INC)) -idirafter $(DLPACK_UPSTREAM_INC) \
	  $(WDL_SRC) $(WDL_TEST_SRC) $(WDL_EXAMPLE_SRC) -o $@

# Both include orders of upstream dlpack.h and webdlpack.h compile cleanly (-pedantic) as C and
# C++, natively and for wasm32, where webdlpack/dlpack.h's static asserts check upstream's
# layout; and the layout probe prints the same sizes and offsets with upstream's definitions
# as with webdlpack's own, on wasm32 (emcc + node) and natively (gcc). A deliberately wrong
# "upstream" header (tests/c/dlpack_bad_upstream/) must fail to compile, naming DLTensor.
WDL_COMPAT := build/dlpack-compat
WDL_COMPAT_FLAGS = -Wall -Wextra -Werror -pedantic -Iwasm/include -Itests/c -idirafter $(DLPACK_UPSTREAM_INC)
test-c-dlpack-compat: build/layout/wasm32.json
	$(WDL_UPSTREAM_CHECK)
	@mkdir -p $(WDL_COMPAT)/probe
	@echo '{"type": "commonjs"}' > $(WDL_COMPAT)/probe/package.json
	@for src in $(WDL_ORDER_SRC); do \
	  n=$$(basename $$src .c); \
	  $(CC_NATIVE) -std=c11 $(WDL_COMPAT_FLAGS) -c $$src -o $(WDL_COMPAT)/$$n.gcc.o && \
	  $(CXX_NATIVE) -x c++ -std=c++17 $(WDL_COMPAT_FLAGS) -c $$src -o $(WDL_COMPAT)/$$n.gxx.o && \
	  $(EMCC) -std=c11 $(WDL_COMPAT_FLAGS) -O1 -c $$src -o $(WDL_COMPAT)/$$n.wasm.o && \
	  $(EMXX) -x c++ -std=c++17 $(WDL_COMPAT_FLAGS) -O1 -c $$src -o $(WDL_COMPAT)/$$n.wasmxx.o || exit 1; \
	  echo "  include order $$n: gcc, g++, emcc, em++ ok"; \
	done
	$(EMCC) $(WDL_CFLAGS) -O1 -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 -include dlpack/dlpack.h \
	  -idirafter $(DLPACK_UPSTREAM_INC) wasm/tools/layout_probe.c -o $(WDL_COMPAT)/probe/upstream_probe.js
	node $(WDL_COMPAT)/probe/upstream_probe.js > $(WDL_COMPAT)/wasm32-upstream.json
	cmp build/layout/wasm32.json $(WDL_COMPAT)/wasm32-upstream.json
	$(CC_NATIVE) $(WDL_CFLAGS) wasm/tools/layout_probe.c -o $(WDL_COMPAT)/probe/native_ours
	$(CC_NATIVE) $(WDL_CFLAGS) -include dlpack/dlpack.h -idirafter $(DLPACK_UPSTREAM_INC) wasm/tools/layout_probe.c \
	  -o $(WDL_COMPAT)/probe/native_upstream
	$(WDL_COMPAT)/probe/native_ours > $(WDL_COMPAT)/native-ours.json
	$(WDL_COMPAT)/probe/native_upstream > $(WDL_COMPAT)/native-upstream.json
	cmp $(WDL_COMPAT)/native-ours.json $(WDL_COMPAT)/native-upstream.json
	@echo "  layout probe: upstream dlpack.h = webdlpack/dlpack.h on wasm32 and natively"
	@for cc in "$(CC_NATIVE)" "$(EMCC)"; do \
	  if $$cc -std=c11 $(WDL_COMPAT_FLAGS) -Itests/c/dlpack_bad_upstream -fsyntax-only \
	       tests/c/test_dlpack_order_upstream_first.c 2> $(WDL_COMPAT)/bad.err; then \
	    echo "a dlpack.h with a wrong DLTensor layout compiled with $$cc"; exit 1; fi; \
	  grep -q "DLTensor" $(WDL_COMPAT)/bad.err || { cat $(WDL_COMPAT)/bad.err; exit 1; }; \
	done
	@echo "  a dlpack.h with a wrong DLTensor layout is refused at compile time (gcc, emcc)"

# Long mode of the C validator fuzzer (make fuzz): ASan/UBSan, FUZZ_SECONDS of random structs.
WDL_FUZZ_BIN := build/tests-c/fuzz_validate
$(WDL_FUZZ_BIN): $(WDL_SRC) $(WDL_HDR) tests/c/fuzz_validate.c tests/c/fuzz_validate.h tests/c/fuzz/main.c
	@mkdir -p $(@D)
	$(CC_NATIVE) $(WDL_CFLAGS) -g -O1 $(WDL_SANITIZE) -Iwasm/src -Itests/c $(WDL_SRC) tests/c/fuzz_validate.c \
	  tests/c/fuzz/main.c -o $@

test-c: $(WDL_TEST_BIN) test-c-dlpack-compat
	@mkdir -p build/test-results
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(WDL_TEST_BIN) --junit build/test-results/c.xml

wasm-clean:
	rm -rf $(WDL_OUT) build/layout build/tests-c build/dlpack-compat
