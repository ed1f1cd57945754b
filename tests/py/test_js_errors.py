"""The one translator of JS errors into Python errors (webdlpack.bridge.js.translate), on CPython.

A JS ``WebDLPackError`` reaches Python as an object with ``code``, ``message``
(``"[CODE] what; field F; value V; expected E"``), ``field``, ``value`` and
``expected``; here a plain stand-in plays that object.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from webdlpack import ErrorCode, WebDLPackBufferError, WebDLPackDeviceError, WebDLPackTypeError, WebDLPackValueError
from webdlpack.bridge.js import translate


def _js_error(code: str | None, what: str, **details: object) -> SimpleNamespace:
    parts = [what] + [f"{key} {details[key]}" for key in ("field", "value", "expected") if key in details]
    message = "; ".join(parts) if code is None else f"[{code}] " + "; ".join(parts)
    return SimpleNamespace(code=code, message=message, **details)


@pytest.mark.parametrize(
    ("gpu", "code", "cls"),
    [
        (True, "STALE_POINTER", WebDLPackDeviceError),
        (False, "COPY_REQUIRED", WebDLPackBufferError),
        (False, "INVALID_ARGUMENT", WebDLPackTypeError),
        (False, "OUT_OF_BOUNDS", WebDLPackValueError),
    ],
)
def test_the_details_of_a_js_error_come_across_once(gpu: bool, code: str, cls: type) -> None:
    js = _js_error(code, "bytes outside the heap", field="value", value=7, expected="a heap view")
    err = translate(SimpleNamespace(js_error=js), gpu=gpu)
    assert type(err) is cls
    assert (err.code, err.field, err.value, err.expected) == (ErrorCode[code], "value", 7, "a heap view")
    text = str(err)
    assert text == f"[{code}] (from JS) bytes outside the heap; field value; value 7; expected a heap view"
    assert text.count("field value") == 1 and text.count("expected a heap view") == 1


def test_a_js_error_without_a_webdlpack_code() -> None:
    plain = SimpleNamespace(js_error=SimpleNamespace(message="TypeError: x is not a function"))
    gpu = translate(plain, gpu=True)
    handover = translate(plain, gpu=False)
    assert (type(gpu), gpu.code) == (WebDLPackDeviceError, ErrorCode.GPU_ERROR)
    assert (type(handover), handover.code) == (WebDLPackValueError, ErrorCode.INVALID_ARGUMENT)
    assert str(handover) == "[INVALID_ARGUMENT] (from JS) TypeError: x is not a function"
    assert (handover.field, handover.value, handover.expected) == (None, None, None)


def test_a_value_python_cannot_hold_stays_in_the_message_only() -> None:
    js = _js_error("BAD_SHAPE", "negative extent", field="shape", value="[2, -1]", expected=">= 0")
    js.value = object()  # e.g. a JsProxy of an array
    err = translate(SimpleNamespace(js_error=js), gpu=False)
    assert err.value is None and "value [2, -1]" in str(err)
