#!/usr/bin/env bash
# Run the test suites (all, or the ones named), each writing JUnit XML into
# build/test-results/, then print one summary line. Exit non-zero if any test
# failed, any suite crashed, or a suite ran no test.
#   suites: lint  c  js  py  gpu  browser  pyodide-range
#   (browser: TVM's test models are built by scripts/tvm/build.sh beside the suites before it. gpu: dawn.node on a
#   Vulkan driver, SwiftShader when no GPU; scripts/vk-env.sh. pyodide-range: the demo and the Python bridge specs
#   under the oldest and the newest supported Pyodide, scripts/test-matrix.mjs --quick)
set -uo pipefail
cd "$(dirname "$0")/.."
# A Node.js that scripts/bootstrap.sh installed (the machine's was missing or older than 20) comes first.
if [ -x .tools/bin/node ]; then PATH="$PWD/.tools/bin:$PATH"; fi
RESULTS=build/test-results
mkdir -p "$RESULTS"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(lint c js py gpu browser pyodide-range)
status=0
# The browser suite loads TVM's test models (scripts/tvm/build.sh: minutes on a fresh machine, a second once cached).
# The build runs beside the suites before it, which don't need it, and the browser suite waits for it.
tvm_pid=
if [ "${suites[0]}" != browser ] && printf '%s\n' "${suites[@]}" | grep -qx browser; then
  WEBDLPACK_TVM_NICE=0 bash scripts/tvm/build.sh > build/tvm-build.log 2>&1 &  # not niced: it is on the critical path
  tvm_pid=$!
fi
for suite in "${suites[@]}"; do
  rm -f "$RESULTS/$suite.xml"
  echo "=== $suite ==="
  case "$suite" in
    lint)
      .venv/bin/python scripts/lint.py --junit "$RESULTS/lint.xml" || status=1 ;;
    c)
      make --no-print-directory test-c || status=1 ;;
    js)
      rm -rf build/tests-js
      npx tsc -p tests/js/tsconfig.json || status=1
      node --test --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=junit --test-reporter-destination="$RESULTS/js.xml" \
        $(find build/tests-js/tests/js -name '*.test.js' | sort) || status=1 ;;
    py)
      .venv/bin/python -m pytest tests/py --junitxml="$RESULTS/py.xml" -o junit_family=xunit2 || status=1 ;;
    gpu)
      bash scripts/vk-env.sh node --test --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=junit --test-reporter-destination="$RESULTS/gpu.xml" \
        $(find tests/gpu-node -name '*.test.mjs' | sort) || status=1 ;;
    browser)
      if [ -n "$tvm_pid" ]; then
        tvm_ok=1; wait "$tvm_pid" || tvm_ok=0
        cat build/tvm-build.log
        [ $tvm_ok = 1 ] || { echo "TVM's test models failed to build (above): the browser suite needs them"; status=1; }
      fi
      # Playwright strips the specs' types without checking them: tsc does (strict, as js/src).
      npx tsc -p tests/browser/tsconfig.json || status=1
      npx playwright test || status=1 ;;
    pyodide-range)
      node scripts/test-matrix.mjs --quick --junit "$RESULTS/pyodide-range.xml" || status=1 ;;
    *)
      echo "unknown suite: $suite"; status=1 ;;
  esac
done
.venv/bin/python scripts/test_summary.py "$RESULTS" "${suites[@]}" || status=1
exit $status
