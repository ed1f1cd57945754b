"""The native module's adopt of a block seen before (py/native/adopt.c), on its own: a Tensor only while every
cached byte is the same, an owner that calls the deleter exactly once, the open scopes honoured, and take()
(from_js's common case: JS's export, then that adopt or the full one) passing errors through with nothing taken.

On CPython webdlpack keeps no cache (a block seen once may be unmapped since), so nothing binds these functions
here but the tests; in Pyodide from_dlpack.py and js_tensors.py bind them (tests/py/pyodide_fast_paths_body.py
and tests/browser/python-bridge-*.spec.ts run them there)."""

from __future__ import annotations

import ctypes
import inspect
import os

import pytest
import webdlpack as w
from webdlpack.api import debug as _debug
from webdlpack.core import abi as _abi
from webdlpack.core.native import NATIVE
from webdlpack.exchange.owner import ManagedOwner
from webdlpack.tensor.scope import OPEN_SCOPES, track

pytestmark = pytest.mark.skipif(os.environ.get("WEBDLPACK_NATIVE") == "0", reason="native module turned off")

STRUCT = ctypes.sizeof(_abi.DLManagedTensorVersioned)


class Block:
    """A hand-written versioned struct over four float32 values, its shape right after it, a counting deleter."""

    def __init__(self) -> None:
        self.data = (ctypes.c_float * 4)(1.0, 2.0, 3.0, 4.0)
        self.memory = (ctypes.c_uint64 * 12)()
        self.address = ctypes.addressof(self.memory)
        self.deleted: list[int] = []
        self.deleter = _abi.DELETER(lambda address: self.deleted.append(address))
        m = _abi.DLManagedTensorVersioned.from_address(self.address)
        m.version.major, m.version.minor = 1, 1
        m.deleter = self.deleter
        t = m.dl_tensor
        t.data = ctypes.addressof(self.data)
        t.device.device_type, t.device.device_id = 1, 0
        t.ndim = 1
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
        self.shape = ctypes.c_int64.from_address(self.address + STRUCT)
        self.shape.value = 4
        t.shape = ctypes.cast(self.address + STRUCT, ctypes.POINTER(ctypes.c_int64))
        self.nbytes = STRUCT + 8

    def entry(self, view: object) -> tuple:
        """What adopt.py's _remember stores for this block."""
        deleter = ctypes.cast(self.deleter, ctypes.c_void_p).value
        return (True, self.nbytes, ctypes.string_at(self.address, self.nbytes), deleter, view)


@pytest.fixture
def cached():
    """A block, a view of it (as a full check made it), and a cache dict bound to the native adopt."""
    block = Block()
    view = w.from_buffer(block.data)._view  # float32[4] over the block's data, what the full check would give
    seen: dict[int, tuple] = {block.address: block.entry(view)}
    NATIVE.bind_adopt(seen, w.Tensor, ManagedOwner, OPEN_SCOPES, track)
    return block, seen


def test_an_unchanged_block_is_adopted_as_a_tensor_whose_deleter_runs_once(cached):
    block, _ = cached
    before = _debug.import_stats()
    t = NATIVE.adopt(block.address, True)
    assert type(t) is w.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0] and t.shape == (4,)
    assert (t._templates, t._exporter) == (None, None) and isinstance(t._owner, ManagedOwner)
    assert _debug.import_stats()["live"] == before["live"] + 1 and block.deleted == []
    t.dispose()
    t.dispose()
    assert block.deleted == [block.address]
    assert _debug.import_stats()["live"] == before["live"]


def test_any_difference_is_a_miss_that_takes_nothing(cached):
    block, seen = cached
    before = _debug.import_stats()
    assert NATIVE.adopt(block.address, False) is None  # the other kind of struct
    assert NATIVE.adopt(block.address + 8, True) is None  # not cached
    block.shape.value = 2  # a byte of the shape array, after the struct
    assert NATIVE.adopt(block.address, True) is None
    block.shape.value = 4
    seen[block.address] = ("not", "an", "entry")  # not what _remember stores: a miss
    assert NATIVE.adopt(block.address, True) is None
    assert block.deleted == [] and _debug.import_stats() == before


def test_the_open_scope_gets_the_tensor_as_tensor_wrap_gives_it(cached):
    block, _ = cached
    with w.scope():
        t = NATIVE.adopt(block.address, True)
        kept = w.keep(NATIVE.adopt(block.address, True))
    assert t.disposed and block.deleted == [block.address]
    assert not kept.disposed
    kept.dispose()
    assert block.deleted == [block.address, block.address]


def test_take_exports_then_adopts_cached_or_in_full_and_passes_errors_through(cached):
    block, _ = cached
    full: list[tuple[int, bool]] = []
    answers: list[object] = [block.address, block.address + 8, "no int"]
    exported: list[object] = []

    def export(value: object) -> object:
        exported.append(value)
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    NATIVE.bind_take(
        lambda: (export, 0, None), lambda address, versioned: full.append((address, versioned)) or "adopted"
    )
    t = NATIVE.take("js tensor")
    assert type(t) is w.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0]
    t.dispose()
    assert NATIVE.take("other") == "adopted" and full == [(block.address + 8, True)]  # a miss: the full adopt
    with pytest.raises(TypeError, match="did not return an address"):
        NATIVE.take("third")
    answers.append(ValueError("refused by JS"))
    with pytest.raises(ValueError, match="refused by JS"):
        NATIVE.take("fourth")
    assert exported == ["js tensor", "other", "third", "fourth"] and block.deleted == [block.address]


def test_take_goes_through_js_export_caller_for_what_it_takes_and_through_pyodide_for_the_rest(cached):
    """JS's export caller (Pyodide: a table entry; here a C callback) gets the PyObject* of take's argument: an
    address is the export, 0 sends the value through the Python -> JS call, all ones means JS threw (the
    failure function raises its error and nothing is taken)."""
    block, _ = cached
    seen_by_caller: list[object] = []
    through_call: list[object] = []

    def caller(pointer: int) -> int:
        value = ctypes.cast(pointer, ctypes.py_object).value
        seen_by_caller.append(value)
        return {"js tensor": block.address, "threw": ctypes.c_size_t(-1).value}.get(value, 0)

    callback = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p)(caller)
    index = ctypes.cast(callback, ctypes.c_void_p).value

    def failed() -> None:
        raise ValueError("the kept JS error")

    def export(value: object) -> int:
        through_call.append(value)
        return block.address

    NATIVE.bind_take(lambda: (export, index, failed), lambda address, versioned: "adopted in full")
    t = NATIVE.take("js tensor")
    assert type(t) is w.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0] and through_call == []
    t.dispose()
    u = NATIVE.take(42)  # not something the caller takes: the Python -> JS call
    assert type(u) is w.Tensor and through_call == [42]
    u.dispose()
    with pytest.raises(ValueError, match="the kept JS error"):
        NATIVE.take("threw")
    assert seen_by_caller == ["js tensor", 42, "threw"] and through_call == [42]
    assert block.deleted == [block.address, block.address]  # the two taken, nothing for the failed one
    NATIVE.bind_take(lambda: (export, index, None), print)
    with pytest.raises(TypeError, match="must return"):
        NATIVE.take("js tensor")  # an index without a failure function is refused
    NATIVE.bind_take(lambda: export, print)
    with pytest.raises(TypeError, match="must return"):
        NATIVE.take("js tensor")


def test_import_managed_in_c_adopts_a_cached_block_else_calls_the_full_adopt(cached):
    """What webdlpack.api.managed binds as import_managed in Pyodide: the Python function's arguments, keywords,
    signature and docstring, with no Python frame before the cached adopt."""
    block, _ = cached
    full: list[tuple[int, object]] = []
    fast = NATIVE.import_managed_function(lambda a, v: full.append((a, v)) or "full", "Take it.", "some.module")
    assert str(inspect.signature(fast)) == "(address, versioned=True)" and fast.__module__ == "some.module"
    assert fast.__doc__ == "Take it." and fast.__name__ == "import_managed"
    for call in (lambda: fast(block.address), lambda: fast(address=block.address, versioned=True)):
        t = call()
        assert type(t) is w.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0]
        t.dispose()
    assert block.deleted == [block.address, block.address] and full == []
    assert fast(block.address + 8) == "full" and fast(block.address, False) == "full"  # not cached; another kind
    assert full == [(block.address + 8, True), (block.address, False)] and len(block.deleted) == 2
    again = NATIVE.import_managed_function(print, "Another text.", "m")
    assert again.__doc__ == "Take it."  # the docstring of the first call is kept (one import_managed per process)
    for bad, message in (
        (lambda: fast(), r"import_managed\(\) missing its required argument 'address'"),
        (lambda: fast(1, True, 3), r"import_managed\(\) takes at most 2 positional arguments \(3 given\)"),
        (lambda: fast(1, copy=True), r"import_managed\(\) got an unexpected keyword argument 'copy'"),
        (lambda: fast(1, address=1), "argument 'address' given twice"),
        (lambda: NATIVE.import_managed_function(5, "d", "m"), "adopt must be callable"),
    ):
        with pytest.raises(TypeError, match=message):
            bad()


class FakeJsException(Exception):
    """Stands for pyodide.ffi.JsException."""


def test_from_js_in_c_takes_with_copy_none_and_leaves_the_rest_to_python(cached):
    """What js_tensors.py binds as webdlpack.from_js in Pyodide: copy=None through take (JS's export, the cached
    adopt), a JS error raised as its typed translation (from None), any other copy to the Python from_js."""
    block, _ = cached

    def caller(pointer: int) -> int:
        return block.address if ctypes.cast(pointer, ctypes.py_object).value == "js tensor" else 0

    callback = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p)(caller)

    def export(value: object) -> int:  # what Pyodide's Python -> JS call gives for what the caller does not take
        raise FakeJsException(f"JS refused {value}") if value != "type error" else TypeError("not a JS error")

    NATIVE.bind_take(lambda: (export, ctypes.cast(callback, ctypes.c_void_p).value, print), lambda a, v: None)
    in_python: list[tuple[object, object]] = []

    def python_from_js(js_tensor: object, *, copy: object = None) -> object:
        """The Python from_js's docstring."""
        in_python.append((js_tensor, copy))
        return "python"

    def translate(exc: BaseException) -> BaseException:
        return ValueError(f"typed: {exc}")

    fast = NATIVE.from_js_function(python_from_js, FakeJsException, translate, "webdlpack.api.js_tensors")
    assert str(inspect.signature(fast)) == "(js_tensor, *, copy=None)" and fast.__name__ == "from_js"
    assert fast.__doc__ == "The Python from_js's docstring." and fast.__module__ == "webdlpack.api.js_tensors"
    for call in (lambda: fast("js tensor"), lambda: fast("js tensor", copy=None), lambda: fast(js_tensor="js tensor")):
        t = call()
        assert type(t) is w.Tensor and t.tolist() == [1.0, 2.0, 3.0, 4.0]
        t.dispose()
    assert block.deleted == [block.address] * 3 and in_python == []
    assert fast("x", copy=True) == "python" and fast("y", copy="bad") == "python"
    assert in_python == [("x", True), ("y", "bad")]
    with pytest.raises(ValueError, match="typed: JS refused plain") as raised:
        fast("plain")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__ is True
    with pytest.raises(TypeError, match="not a JS error"):  # not a JS error: as it is
        fast("type error")
    for bad, message in (
        (lambda: fast(), r"from_js\(\) missing its required argument 'js_tensor'"),
        (lambda: fast(1, 2), r"from_js\(\) takes at most 1 positional argument \(2 given\)"),
        (lambda: fast(1, device="cpu"), "unexpected keyword argument 'device'"),
        (lambda: NATIVE.from_js_function(python_from_js, FakeJsException, 5, "m"), "must be callable"),
    ):
        with pytest.raises(TypeError, match=message):
            bad()
    assert len(block.deleted) == 3


def test_bad_calls_are_refused():
    with pytest.raises(TypeError, match="takes 5 arguments"):
        NATIVE.bind_adopt({})
    with pytest.raises(TypeError, match="track must be callable"):
        NATIVE.bind_adopt({}, w.Tensor, ManagedOwner, OPEN_SCOPES, 5)
    with pytest.raises(TypeError, match="must be types"):
        NATIVE.bind_adopt({}, 5, ManagedOwner, OPEN_SCOPES, track)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        NATIVE.adopt(1)
    with pytest.raises(TypeError, match="must be callable"):
        NATIVE.bind_take(5, print)
    with pytest.raises(TypeError, match="takes 1 argument"):
        NATIVE.take()
