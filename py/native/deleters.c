/*
 * deleters.c — calling the deleter of a managed struct Python imported (webdlpack's native module).
 *
 * In Pyodide a deleter is a wasm-table entry, often a JS function that may throw; a JS exception must never
 * unwind through CPython's C frames. So the call goes through a JS function JS hands over once
 * (set_js_deleter_caller): it calls the entry inside try/catch and returns 0 or 1, and on 1 this module calls
 * back into Python (the bridge's failure handler), which raises the JS error typed. That is one C -> JS call
 * instead of a Python -> JS call with two converted arguments (about 0.5 µs in Pyodide). Until JS's caller is
 * set (the bridge registers after the package may be imported) calls go through Python's fallback caller
 * (set_deleter_fallback: owner.py's _call, which looks the bridge up, sets JS's caller here, or uses ctypes
 * where there is no bridge, as on CPython). With neither, the call is refused.
 */
#include "native_module.h"

/* Calls deleter `fn` with `address` inside JS try/catch: 0 when it returned, 1 when it threw. */
typedef int (*js_deleter_caller)(void *fn, void *address);
static js_deleter_caller js_caller; /* set by set_js_deleter_caller (Pyodide); NULL: use py_fallback */
static PyObject *js_failure;        /* called (no arguments) when js_caller returns 1: raises the JS error */

static PyObject *py_fallback; /* Python's caller (owner.py's _call), used until JS's caller is set */

int wdl_py_invoke_deleter(void *fn, void *address) {
  if (js_caller != NULL) {
    if (js_caller(fn, address) == 0) return 0;
    PyObject *r = PyObject_CallNoArgs(js_failure); /* raises the JS error; returns NULL */
    if (r == NULL) return -1;
    Py_DecRef(r);
    return 0;
  }
  if (py_fallback != NULL) { /* finds JS's caller (and sets it here) or uses ctypes */
    PyObject *f = PyLong_FromVoidPtr(fn), *a = PyLong_FromVoidPtr(address);
    PyObject *args = f != NULL && a != NULL ? PyTuple_Pack(2, f, a) : NULL;
    PyObject *r = args != NULL ? PyObject_Call(py_fallback, args, NULL) : NULL;
    Py_DecRef(f);
    Py_DecRef(a);
    Py_DecRef(args);
    if (r == NULL) return -1;
    Py_DecRef(r);
    return 0;
  }
  /* owner.py sets the fallback when it is imported; a deleter is never called bare (in Pyodide it may be a JS
   * function that throws, and there must be a try/catch around it). */
  PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: no deleter caller is set (set_deleter_fallback)");
  return -1;
}

/* set_deleter_fallback(caller: callable) -> None: caller(fn, address) calls a deleter until JS's caller is set. */
PyObject *wdl_py_set_deleter_fallback(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 1, "set_deleter_fallback(caller) takes 1 argument") != 0) return NULL;
  if (PyCallable_Check(args[0]) != 1) {
    PyErr_SetString(PyExc_TypeError, "set_deleter_fallback: caller must be callable");
    return NULL;
  }
  Py_IncRef(args[0]);
  Py_DecRef(py_fallback);
  py_fallback = args[0];
  return wdl_py_none();
}

/* set_js_deleter_caller(index: int, on_failure: callable) -> None: the JS caller call_deleter uses. */
PyObject *wdl_py_set_js_deleter_caller(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 2, "set_js_deleter_caller(index, on_failure) takes 2 arguments") != 0) return NULL;
  void *index = PyLong_AsVoidPtr(args[0]);
  if (PyErr_Occurred()) return NULL;
  if (index == NULL || PyCallable_Check(args[1]) != 1) {
    PyErr_SetString(PyExc_ValueError, "set_js_deleter_caller: a non-zero table index and a callable are needed");
    return NULL;
  }
  Py_IncRef(args[1]);
  Py_DecRef(js_failure);
  js_failure = args[1];
  js_caller = (js_deleter_caller)index;
  return wdl_py_none();
}

/* call_deleter(fn: int, address: int) -> None: call deleter `fn` with `address` (through the JS caller
 * where one is set). A deleter that threw in JS raises here, through the failure handler. */
PyObject *wdl_py_call_deleter(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 2, "call_deleter(fn, address) takes 2 arguments") != 0) return NULL;
  void *fn = PyLong_AsVoidPtr(args[0]);
  void *address = PyLong_AsVoidPtr(args[1]);
  if (PyErr_Occurred()) return NULL;
  if (fn == NULL) {
    PyErr_SetString(PyExc_ValueError, "call_deleter: the deleter is NULL");
    return NULL;
  }
  return wdl_py_invoke_deleter(fn, address) == 0 ? wdl_py_none() : NULL;
}
