"""export_managed made in C by the native module (py/native/functions.c): a Tensor that has exported before goes to
its bound exporter with no Python frame; every other call reaches the Python export_managed, so the results and
the errors are the Python function's."""

from __future__ import annotations

import inspect
import os

import pytest
import webdlpack as w
from webdlpack.api import managed
from webdlpack.api.debug import export_stats
from webdlpack.core.errors import ErrorCode, WebDLPackValueError
from webdlpack.core.native import NATIVE
from webdlpack.exchange.export import release_export

pytestmark = pytest.mark.skipif(NATIVE is None or os.environ.get("WEBDLPACK_NATIVE") == "0", reason="no native module")


class Sub(w.Tensor):
    """Not exactly a Tensor: always the Python function."""

    __slots__ = ()


def test_export_managed_is_the_c_function_with_the_python_signature_and_docstring():
    fn = managed.export_managed
    assert type(fn).__name__ == "builtin_function_or_method" and fn.__name__ == "export_managed"
    assert str(inspect.signature(fn)) == "(x, versioned=True)" and fn.__module__ == "webdlpack.api.managed"
    assert fn.__doc__ is not None and fn.__doc__.startswith("Export ``x`` as a new managed DLPack struct")


def test_every_export_is_a_new_live_struct_released_once():
    t = w.from_buffer(bytearray(16))
    before = export_stats()
    addresses = [managed.export_managed(t) for _ in range(3)]  # the first binds the exporter, the next go through C
    assert t._exporter is not None and len(set(addresses)) == 3
    assert export_stats()["live"] == before["live"] + 3
    assert [release_export(a) for a in addresses] == [True, True, True]
    assert [release_export(a) for a in addresses] == [False, False, False]  # each struct freed once
    assert export_stats()["live"] == before["live"]
    t.dispose()


def test_other_calls_reach_the_python_function():
    t = w.from_buffer(bytearray(16))
    release_export(managed.export_managed(t))  # bound now
    legacy = managed.export_managed(t, versioned=False)  # a keyword or a second argument: Python
    by_name = managed.export_managed(x=t)
    sub = Sub.__new__(Sub)
    sub._view, sub._owner, sub._templates, sub._exporter = t._view, t._owner, None, None
    address = managed.export_managed(sub)
    assert len({legacy, by_name, address}) == 3
    for a in (legacy, by_name, address):
        assert release_export(a)
    t.dispose()
    with pytest.raises(WebDLPackValueError) as refused:  # disposed (the exporter unbound): the Python function's error
        managed.export_managed(t)
    assert refused.value.code == ErrorCode.DISPOSED


def test_bad_bindings_are_refused_and_change_nothing():
    t = w.from_buffer(bytearray(8))
    for bad, error, message in (
        (lambda: NATIVE.export_managed_function(5, w.Tensor, "m"), TypeError, "must be callable"),
        (lambda: NATIVE.export_managed_function(print, 5, "m"), TypeError, "must be callable, Tensor a type"),
        (lambda: NATIVE.export_managed_function(print, w.Tensor), TypeError, "takes 3 arguments"),
        (lambda: NATIVE.export_managed_function(print, int, "m"), AttributeError, "_exporter"),
    ):
        with pytest.raises(error, match=message):
            bad()
    addresses = [managed.export_managed(t) for _ in range(2)]  # still bound to Tensor's slot
    assert all(release_export(a) for a in addresses)
    t.dispose()
