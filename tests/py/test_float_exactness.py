"""No test compares floats bit-exactly unless exactness is the point, and then it says why.

Floating-point results of BLAS, SIMD and transcendental functions may differ in the last bit from one CPU to
another (an AMD EPYC with AVX-512 differs from other x86 machines), and another CPU cannot be simulated here, so
the rule is kept by reading the tests. A comparison is bit-exact when it is one of:

- Python: ``assert_array_equal`` / ``assert_equal`` / ``array_equal``; ``==``/``!=`` on a line that reads
  ``.tobytes()``, ``read_bytes()`` or ``read_text()`` (bytes of arrays or files); ``==``/``!=`` with a float
  literal that is not a short dyadic number;
- JS/TS: ``deepEqual`` / ``deepStrictEqual`` / ``toEqual`` / ``toStrictEqual`` / ``equal`` / ``strictEqual`` /
  ``toBe`` with a float literal that is not a short dyadic number; ``deepEqual``-like calls on a line naming a
  float typed array with no literal list of numbers to compare against; ``.equals(``/``compare(`` of bytes read
  from files.

A short dyadic literal (a multiple of 2**-10 below 2**24, such as ``7.5`` or ``-2.25``) is exact in float16, 32
and 64, and +, -, *, / of such values are exact on every IEEE CPU, so comparing to one is exact by construction;
``0.1`` or ``0.7310586`` is not. Any other bit-exact comparison needs a comment containing ``exact:`` on its line
or on one of the three lines above, saying why it is exact (a copy of bytes, integer arithmetic, ...).
Everything else compares with a tolerance (``assert_allclose``, ``toBeCloseTo``, ``Math.abs(a - b) < tol``).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: How many lines above a comparison its ``exact:`` comment may be.
MARKER_REACH = 3
MARKER = re.compile(r"(#|//|/\*).*\bexact:")

FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\.\d+(?:[eE][-+]?\d+)?)(?![\w.])")
PY_ARRAY_EQUAL = re.compile(r"\b(assert_array_equal|assert_equal|array_equal)\s*\(")
PY_BYTES = re.compile(r"\.\s*(tobytes|read_bytes|read_text)\s*\(\s*\)")
PY_EQ = re.compile(r"(==|!=)")
JS_EQUAL_CALL = re.compile(r"\b(deepEqual|deepStrictEqual|toEqual|toStrictEqual|equal|strictEqual|toBe)\s*\(")
JS_DEEP_CALL = re.compile(r"\b(deepEqual|deepStrictEqual|toEqual|toStrictEqual)\s*\(")
JS_FLOAT_ARRAY = re.compile(r"\bFloat(16|32|64)Array\b")
JS_NUMBER_LIST = re.compile(r"\[\s*-?[\d.]+(\s*,\s*-?[\d.]+)*\s*,?\s*\]")
JS_FILE_BYTES = re.compile(r"readFileSync\(.*\.(equals|compare)\(|\.(equals|compare)\(.*readFileSync\(")
JS_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`")


def is_short_dyadic(literal: str) -> bool:
    """True for a float literal whose value is a multiple of 2**-10 with magnitude below 2**24 (exact everywhere)."""
    value = float(literal)
    scaled = value * 1024
    return abs(value) < 2**24 and scaled == int(scaled)


def _has_inexact_literal(code: str) -> bool:
    return any(not is_short_dyadic(m.group(1)) for m in FLOAT_LITERAL.finditer(code))


def python_code_lines(text: str) -> dict[int, str]:
    """Each line's code with strings and comments removed (tokenize), by line number."""
    lines: dict[int, list[str]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):  # not Python (a fragment): read it as it is
        return {i: line for i, line in enumerate(text.splitlines(), 1)}
    for tok in tokens:
        if tok.type in (tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            continue
        if getattr(tokenize, "FSTRING_START", None) is not None and tok.type in (
            tokenize.FSTRING_START,
            tokenize.FSTRING_MIDDLE,
            tokenize.FSTRING_END,
        ):
            continue
        lines.setdefault(tok.start[0], []).append(tok.string)
    return {n: " ".join(parts) for n, parts in lines.items()}


def python_findings(text: str) -> list[tuple[int, str]]:
    """``(line, why)`` for each bit-exact comparison in Python source ``text`` (markers not yet applied)."""
    found = []
    for n, code in python_code_lines(text).items():
        if PY_ARRAY_EQUAL.search(code):
            found.append((n, "array equality"))
        elif PY_EQ.search(code) and PY_BYTES.search(code):
            found.append((n, "bytes equality"))
        elif PY_EQ.search(code) and _has_inexact_literal(code):
            found.append((n, "== with a float that is not a short dyadic number"))
    return found


def js_findings(text: str) -> list[tuple[int, str]]:
    """``(line, why)`` for each bit-exact comparison in JS/TS source ``text`` (markers not yet applied)."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        code = JS_STRING.sub('""', line.split("//", 1)[0])
        if JS_EQUAL_CALL.search(code) and _has_inexact_literal(code):
            found.append((n, "equality with a float that is not a short dyadic number"))
        elif JS_DEEP_CALL.search(code) and JS_FLOAT_ARRAY.search(code) and not JS_NUMBER_LIST.search(code):
            found.append((n, "deep equality of float arrays"))
        elif JS_FILE_BYTES.search(code):
            found.append((n, "bytes of files compared"))
    return found


def unmarked(text: str, findings: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The findings with no ``exact:`` comment on their line or the :data:`MARKER_REACH` lines above."""
    lines = text.splitlines()
    return [
        (n, why)
        for n, why in findings
        if not any(MARKER.search(lines[i]) for i in range(max(0, n - 1 - MARKER_REACH), n) if i < len(lines))
    ]


def scanned_files() -> list[Path]:
    """Every Python and JS/TS test file (fixtures and program bodies included), and the examples the tests run."""
    suffixes = {".py", ".ts", ".mjs", ".js"}
    roots = [TESTS, ROOT / "examples"]
    return sorted(p for r in roots for p in r.rglob("*") if p.suffix in suffixes and p.is_file())


def test_no_test_compares_floats_bit_exactly_without_saying_why() -> None:
    problems = []
    for path in scanned_files():
        text = path.read_text()
        findings = python_findings(text) if path.suffix == ".py" else js_findings(text)
        lines = text.splitlines()
        for n, why in unmarked(text, findings):
            problems.append(f"{path.relative_to(ROOT)}:{n}: {why}: {lines[n - 1].strip()}")
    assert not problems, (
        "bit-exact float comparisons (use a tolerance, or say why it is exact in an `exact:` comment):\n"
        + "\n".join(problems)
    )


# ---- the scanner itself, on made-up sources -------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "np.testing.assert_array_equal(y, ref)\n",
        "assert np.array_equal(a, b)\n",
        "assert path.read_bytes() == other.read_bytes()\n",
        "assert a.tobytes() != b.tobytes()\n",
        "assert float(y[0]) == 0.7310586\n",
        "assert y == 0.1\n",
    ],
)
def test_the_python_scanner_catches(source: str) -> None:
    assert unmarked(source, python_findings(source))


@pytest.mark.parametrize(
    "source",
    [
        "np.testing.assert_allclose(y, ref, rtol=1e-6)\n",
        "assert t.tolist() == [1.5, -2.0, 7.5]\n",
        "assert msg == 'value 0.1 is wrong'\n",
        "# exact: a copy of the bytes\nnp.testing.assert_array_equal(back, a)\n",
        "np.testing.assert_array_equal(back, a)  # exact: a zero-copy view\n",
        "assert err < 1e-5\n",
    ],
)
def test_the_python_scanner_lets_pass(source: str) -> None:
    assert not unmarked(source, python_findings(source))


@pytest.mark.parametrize(
    "source",
    [
        "assert.deepEqual([...out], [0.7310586, 0.5]);\n",
        "expect(r.values).toEqual(expected.map((v) => v * 0.1));\n",
        "assert.deepEqual([...(a as Float32Array)], [...(b as Float32Array)]);\n",
        "assert.ok(readFileSync(p).equals(readFileSync(q)));\n",
        "expect(y).toBe(0.3);\n",
    ],
)
def test_the_js_scanner_catches(source: str) -> None:
    assert unmarked(source, js_findings(source))


@pytest.mark.parametrize(
    "source",
    [
        "assert.deepEqual([...(t.view as Float32Array)], [1, 2, 3.5]);\n",
        'expect(version).toBe("0.1.0");\n',
        "expect(Math.abs(v - ref)).toBeLessThan(1e-5);\n",
        "// exact: the same bytes, copied\nassert.deepEqual([...(a as Float32Array)], [...(b as Float32Array)]);\n",
    ],
)
def test_the_js_scanner_lets_pass(source: str) -> None:
    assert not unmarked(source, js_findings(source))
