/*
 * exchange.c — webdlpack's native module: the hot path of exporting a Python tensor as a managed
 * DLPack struct, and of freeing it.
 *
 * webdlpack/exchange/export.py builds, once per tensor, the bytes of its managed struct followed by its
 * shape and strides arrays (a template). An export copies those bytes into a new block, points the
 * struct's shape/strides at the block's own arrays and registers the block with the tensor's owner, so
 * the memory stays alive until the consumer calls the deleter. Done in Python that is a dozen
 * interpreter operations; in Pyodide each costs 0.05-0.1 µs, and calling a C function through ctypes
 * about 1 µs. Here it is one call. The deleter is C too: the consumer (JS, C, a capsule destructor)
 * calls it directly instead of through a ctypes callback.
 *
 * Nothing here is a second copy of the Python logic: the registry IS export.py's dict (handed over by
 * bind()), keyed by the struct's address, whose value keeps the block (a bytearray) and the owner; the
 * deleter pops that entry exactly as export.py's Python deleter does. So stats, release_export and the
 * capsule collection see one registry whichever path made an export.
 *
 * The same module calls the deleters of structs Python imported (call_deleter). In Pyodide a deleter is a
 * wasm-table entry, often a JS function that may throw; a JS exception must never unwind through CPython's
 * C frames, so the call goes through a JS function JS hands over once (set_js_deleter_caller): it calls the
 * entry inside try/catch and returns 0 or 1, and on 1 this module calls back into Python (the bridge's
 * failure handler), which raises the JS error typed. That is one C -> JS call instead of a Python -> JS call
 * with two converted arguments (about 0.5 µs in Pyodide). Without a JS caller (CPython) the deleter is called
 * directly, as ctypes would.
 *
 * Built as a Pyodide extension module (emcc -sSIDE_MODULE=1, shipped in the wheel) and natively for
 * the CPython that runs the tests; python_abi.h declares the stable-ABI pieces used.
 */
#include <stdint.h>
#include <string.h>

#include "python_abi.h"
#include "webdlpack/dlpack.h"

#define EXPORT __attribute__((visibility("default")))

static PyObject *registry;      /* export.py's dict: struct address -> (block, owner); set by bind() */
static size_t created;          /* exports made here */
static size_t unknown_deletes;  /* deleter calls for an address that is not a live export */

/* Calls deleter `fn` with `address` inside JS try/catch: 0 when it returned, 1 when it threw. */
typedef int (*js_deleter_caller)(void *fn, void *address);
static js_deleter_caller js_caller;  /* set by set_js_deleter_caller (Pyodide); NULL: call directly */
static PyObject *js_failure;         /* called (no arguments) when js_caller returns 1: raises the JS error */

static PyObject *none(void) {
  Py_IncRef(&_Py_NoneStruct);
  return &_Py_NoneStruct;
}

static int expect_args(Py_ssize_t nargs, Py_ssize_t want, const char *message) {
  if (nargs == want) return 0;
  PyErr_SetString(PyExc_TypeError, message);
  return -1;
}

/* The deleter of every struct exported here (void (*)(void *self), as DLPack asks). Pops the registry
 * entry, which drops the block and the owner; an address that is not live (a consumer's double free) is
 * counted, never freed. Runs with or without a Python exception pending (a capsule destructor may call
 * it while the consumer's own exception is set): that exception is put aside and restored. */
static void export_deleter(void *self) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject *key = PyLong_FromVoidPtr(self);
  if (key != NULL && registry != NULL) {
    PyObject *entry = PyDict_GetItemWithError(registry, key); /* borrowed */
    if (entry != NULL) {
      if (PyDict_DelItem(registry, key) != 0) PyErr_Clear();
    } else {
      PyErr_Clear();
      unknown_deletes++;
    }
  } else {
    PyErr_Clear();
    unknown_deletes++;
  }
  Py_DecRef(key);
  PyErr_Restore(type, value, traceback);
  PyGILState_Release(gil);
}

/* bind(registry: dict) -> None: the dict export() and the deleter use. */
static PyObject *bind(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (expect_args(nargs, 1, "bind(registry) takes one dict") != 0) return NULL;
  if (PyDict_Size(args[0]) < 0) return NULL;
  Py_IncRef(args[0]);
  Py_DecRef(registry);
  registry = args[0];
  return none();
}

/* export(template: tuple, owner) -> int
 *
 * `template` is export.py's ExportTemplate.native: (bytes, struct_size, shape_field, array_bytes).
 * Copies the bytes into a new block, writes the addresses of the block's shape array (right after the
 * struct, `struct_size` bytes in) and strides array (`array_bytes` later) into the pointer fields at
 * byte `shape_field` and the one after it, registers (block, owner) under the block's address and
 * returns that address. */
static PyObject *export_struct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (expect_args(nargs, 2, "export(template, owner) takes 2 arguments") != 0) return NULL;
  if (registry == NULL) {
    PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: bind(registry) was not called");
    return NULL;
  }
  PyObject *spec = args[0];
  if (PyTuple_Size(spec) != 4) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "export: template must be (bytes, int, int, int)");
    return NULL;
  }
  char *bytes;
  Py_ssize_t length;
  if (PyBytes_AsStringAndSize(PyTuple_GetItem(spec, 0), &bytes, &length) != 0) return NULL;
  Py_ssize_t struct_size = PyLong_AsSsize_t(PyTuple_GetItem(spec, 1));
  Py_ssize_t shape_field = PyLong_AsSsize_t(PyTuple_GetItem(spec, 2));
  Py_ssize_t array_bytes = PyLong_AsSsize_t(PyTuple_GetItem(spec, 3));
  if (PyErr_Occurred()) return NULL;
  if (struct_size < 0 || array_bytes < 0 || shape_field < 0 || struct_size + 2 * array_bytes != length ||
      shape_field + 2 * (Py_ssize_t)sizeof(void *) > struct_size || shape_field % (Py_ssize_t)sizeof(void *) != 0) {
    PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: template sizes do not add up");
    return NULL;
  }
  PyObject *block = PyByteArray_FromStringAndSize(bytes, length);
  if (block == NULL) return NULL;
  char *at = PyByteArray_AsString(block);
  if (((uintptr_t)at & 7u) != 0) { /* the struct holds int64 fields; the allocator gives 8-aligned blocks */
    Py_DecRef(block);
    PyErr_SetString(PyExc_MemoryError, "webdlpack native exchange: block is not 8-byte aligned");
    return NULL;
  }
  void **pointers = (void **)(at + shape_field);
  pointers[0] = at + struct_size;
  pointers[1] = at + struct_size + array_bytes;
  PyObject *key = PyLong_FromVoidPtr(at);
  PyObject *entry = key == NULL ? NULL : PyTuple_Pack(2, block, args[1]);
  int failed = entry == NULL || PyDict_SetItem(registry, key, entry) != 0;
  Py_DecRef(entry);
  Py_DecRef(block);
  if (failed) {
    Py_DecRef(key);
    return NULL;
  }
  created++;
  return key;
}

/* set_js_deleter_caller(index: int, on_failure: callable) -> None: the JS caller call_deleter uses. */
static PyObject *set_js_deleter_caller(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (expect_args(nargs, 2, "set_js_deleter_caller(index, on_failure) takes 2 arguments") != 0) return NULL;
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
  return none();
}

/* call_deleter(fn: int, address: int) -> None: call deleter `fn` with `address` (through the JS caller
 * where one is set). A deleter that threw in JS raises here, through the failure handler. */
static PyObject *call_deleter(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (expect_args(nargs, 2, "call_deleter(fn, address) takes 2 arguments") != 0) return NULL;
  void *fn = PyLong_AsVoidPtr(args[0]);
  void *address = PyLong_AsVoidPtr(args[1]);
  if (PyErr_Occurred()) return NULL;
  if (fn == NULL) {
    PyErr_SetString(PyExc_ValueError, "call_deleter: the deleter is NULL");
    return NULL;
  }
  if (js_caller != NULL) {
    if (js_caller(fn, address) != 0) {
      PyObject *r = PyObject_CallNoArgs(js_failure); /* raises the JS error; returns NULL */
      if (r == NULL) return NULL;
      Py_DecRef(r);
    }
  } else {
    ((void (*)(void *))fn)(address);
  }
  return none();
}

/* same_bytes(address: int, expected: bytes) -> bool: whether memory at `address` holds `expected`. For
 * adopt's fast path, which compares a struct with the bytes of one checked before (the caller knows the
 * range is readable: it was inside memory then, and wasm memory never shrinks). */
static PyObject *same_bytes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (expect_args(nargs, 2, "same_bytes(address, expected) takes 2 arguments") != 0) return NULL;
  void *address = PyLong_AsVoidPtr(args[0]);
  if (PyErr_Occurred()) return NULL;
  char *expected;
  Py_ssize_t length;
  if (PyBytes_AsStringAndSize(args[1], &expected, &length) != 0) return NULL;
  PyObject *answer = address != NULL && memcmp(address, expected, (size_t)length) == 0 ? &_Py_TrueStruct : &_Py_FalseStruct;
  Py_IncRef(answer);
  return answer;
}

/* deleter() -> int: the address of the deleter export() structs carry (templates store it). */
static PyObject *deleter(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromVoidPtr((void *)(uintptr_t)&export_deleter);
}

/* counters() -> (created, unknown_deletes): exports made here and deleter calls on non-live addresses. */
static PyObject *counters(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  PyObject *a = PyLong_FromSize_t(created), *b = PyLong_FromSize_t(unknown_deletes);
  PyObject *pair = a != NULL && b != NULL ? PyTuple_Pack(2, a, b) : NULL;
  Py_DecRef(a);
  Py_DecRef(b);
  return pair;
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, "bind(registry): the export registry dict."},
    {"export", (PyCFunction)(void (*)(void))export_struct, METH_FASTCALL,
     "export(template, owner) -> address of a new managed struct."},
    {"deleter", deleter, METH_NOARGS, "deleter() -> address of the deleter of exported structs."},
    {"counters", counters, METH_NOARGS, "counters() -> (created, unknown_deletes)."},
    {"set_js_deleter_caller", (PyCFunction)(void (*)(void))set_js_deleter_caller, METH_FASTCALL,
     "set_js_deleter_caller(index, on_failure): the JS function (table index) call_deleter goes through."},
    {"same_bytes", (PyCFunction)(void (*)(void))same_bytes, METH_FASTCALL,
     "same_bytes(address, expected) -> whether memory at address holds expected (adopt's fast path)."},
    {"call_deleter", (PyCFunction)(void (*)(void))call_deleter, METH_FASTCALL,
     "call_deleter(fn, address): call a managed struct's deleter."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef module = {
    {{1, NULL}, NULL, 0, NULL},
    "webdlpack._native.exchange",
    "webdlpack's native exchange hot path (see py/native/exchange.c).",
    0,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

EXPORT PyObject *PyInit_exchange(void) { return PyModuleDef_Init(&module); }
