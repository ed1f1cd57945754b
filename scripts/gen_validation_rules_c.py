"""Turn spec/validation-rules.json into a C table for tests/c/test_validation_rules.c.

Usage: python3 scripts/gen_validation_rules_c.py spec/validation-rules.json OUT.inc

Each case becomes one ``wdl_rule_case`` row; shape and strides become static
int64 arrays (padded with 1s up to ``ndim`` when a case sets ``ndim`` beyond its
shape). Addresses written ``END-n`` / ``END+n`` are resolved against the
table's ``memory_size``, which the C runner passes to the validator.
"""

from __future__ import annotations

import json
import sys


def address(value: object, end: int) -> int:
    """An address from the table: an integer, ``"0x..."``, a decimal string or ``END±n``."""
    if isinstance(value, int):
        return value
    text = str(value).replace(" ", "")
    if text.startswith("END"):
        rest = text[3:]
        return end + (int(rest, 0) if rest else 0)
    return int(text, 0)


def c_int(v: int) -> str:
    """An int64 literal for C (``INT64_MIN`` has no literal of its own)."""
    if v == -(1 << 63):
        return "INT64_MIN"
    return f"INT64_C({v})"


def main() -> None:
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        table = json.load(f)
    end = table["memory_size"]
    arrays: list[str] = []
    rows: list[str] = []
    for i, case in enumerate(table["cases"]):
        only = case.get("only")
        t = case["tensor"]
        shape = t.get("shape")
        ndim = t.get("ndim", len(shape) if shape is not None else 0)
        shape_name = "NULL"
        if shape is not None:
            values = [address(v, end) for v in shape] + [1] * max(0, ndim - len(shape))
            values = values or [0]
            shape_name = f"k_shape_{i}"
            arrays.append(f"static const int64_t {shape_name}[] = {{{', '.join(c_int(v) for v in values)}}};")
        strides = t.get("strides")
        strides_name = "NULL"
        if strides is not None:
            values = [address(v, end) for v in strides] or [0]
            strides_name = f"k_strides_{i}"
            arrays.append(f"static const int64_t {strides_name}[] = {{{', '.join(c_int(v) for v in values)}}};")
        managed = case.get("managed", {})
        major, minor = managed.get("version", [1, 1])
        flags = address(managed.get("flags", 0), end)
        expect = case["expect"]
        ok = expect == "ok"
        code = "OK" if ok else expect["code"]
        field = "" if ok else expect["field"]
        dev_type, dev_id = t["device"]
        code_, bits, lanes = t["dtype"]
        nbytes = case.get("nbytes", -1)
        rows.append(
            "  {"
            + ", ".join(
                [
                    json.dumps(case["name"]),
                    "1" if only is None or "c" in only else "0",
                    "1" if managed.get("legacy") else "0",
                    f"{major}u",
                    f"{minor}u",
                    f"UINT64_C({flags})",
                    f"UINT64_C({address(t['data'], end)})",
                    str(dev_type),
                    str(dev_id),
                    str(ndim),
                    str(code_),
                    str(bits),
                    str(lanes),
                    shape_name,
                    strides_name,
                    f"UINT64_C({address(t.get('byte_offset', 0), end) % (1 << 64)})",
                    f"WDL_{code}",
                    json.dumps(field),
                    f"INT64_C({nbytes})",
                ]
            )
            + "},"
        )
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"/* Generated from {src} by scripts/gen_validation_rules_c.py; do not edit. */\n")
        f.write(f"#define WDL_RULES_MEMORY_SIZE UINT64_C({end})\n")
        f.write("\n".join(arrays) + "\n")
        f.write("static const wdl_rule_case k_rule_cases[] = {\n" + "\n".join(rows) + "\n};\n")


if __name__ == "__main__":
    main()
