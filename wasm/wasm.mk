# wasm/wasm.mk — the webdlpack C library: wasm builds (emcc), the layout probe
# and the native tests. Included by the top Makefile (`-include wasm/wasm.mk`);
# also usable alone: `make -f wasm/wasm.mk test-c`.
#
#   WASM_TARGETS   what `make build` produces:
#     wasm/build/libwebdlpack.so   side module (emcc -fPIC -sSIDE_MODULE=1) that Pyodide loads
#     wasm/build/libwebdlpack.a    static library (PIC objects) for frameworks that link it
#     build/layout/wasm32.json     sizes/offsets of the ABI structs as emcc lays them out
#   test-c         native tests (gcc + ASan/UBSan) → build/test-results/c.xml

EMCC ?= emcc
EMAR ?= emar
CC_NATIVE ?= gcc

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

WASM_TARGETS := $(WDL_OUT)/libwebdlpack.so $(WDL_OUT)/libwebdlpack.a build/layout/wasm32.json $(WDL_EXAMPLE_SO)

.PHONY: wasm test-c wasm-clean

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

$(WDL_TEST_BIN): $(WDL_SRC) $(WDL_HDR) $(WDL_TEST_SRC) $(WDL_TEST_HDR) $(WDL_EXAMPLE_SRC)
	@mkdir -p $(@D)
	$(CC_NATIVE) $(WDL_CFLAGS) -g -O1 $(WDL_SANITIZE) -Iwasm/src -Itests/c $(WDL_SRC) $(WDL_TEST_SRC) $(WDL_EXAMPLE_SRC) -o $@

test-c: $(WDL_TEST_BIN)
	@mkdir -p build/test-results
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(WDL_TEST_BIN) --junit build/test-results/c.xml

wasm-clean:
	rm -rf $(WDL_OUT) build/layout build/tests-c
