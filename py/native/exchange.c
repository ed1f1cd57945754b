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
 * The same module calls the deleters of structs Python imported: deleters.c (through JS's try/catch caller
 * in Pyodide) and owner.c (ManagedOwner's base type, which calls the deleter once); adopt.c adopts a block
 * seen before in one call.
 *
 * Built as a Pyodide extension module (emcc -sSIDE_MODULE=1, shipped in the wheel) and natively for
 * the CPython that runs the tests; python_abi.h declares the stable-ABI pieces used.
 */
#include <stdint.h>
#include <string.h>

#include "native_module.h"

static PyObject *registry;     /* export.py's dict: struct address -> (block, owner); set by bind() */
static size_t created;         /* exports made here */
static size_t unknown_deletes; /* deleter calls for an address that is not a live export */

PyObject *wdl_py_none(void) {
  Py_IncRef(&_Py_NoneStruct);
  return &_Py_NoneStruct;
}

PyObject *wdl_py_counter_pair(size_t a, size_t b) {
  PyObject *x = PyLong_FromSize_t(a), *y = PyLong_FromSize_t(b);
  PyObject *pair = x != NULL && y != NULL ? PyTuple_Pack(2, x, y) : NULL;
  Py_DecRef(x);
  Py_DecRef(y);
  return pair;
}

int wdl_py_expect_args(Py_ssize_t nargs, Py_ssize_t want, const char *message) {
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
  if (wdl_py_expect_args(nargs, 1, "bind(registry) takes one dict") != 0) return NULL;
  if (PyDict_Size(args[0]) < 0) return NULL;
  Py_IncRef(args[0]);
  Py_DecRef(registry);
  registry = args[0];
  return wdl_py_none();
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
  if (wdl_py_expect_args(nargs, 2, "export(template, owner) takes 2 arguments") != 0) return NULL;
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

/* same_bytes(address: int, expected: bytes) -> bool: whether memory at `address` holds `expected`. For
 * adopt's fast path, which compares a struct with the bytes of one checked before (the caller knows the
 * range is readable: it was inside memory then, and wasm memory never shrinks). */
static PyObject *same_bytes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 2, "same_bytes(address, expected) takes 2 arguments") != 0) return NULL;
  void *address = PyLong_AsVoidPtr(args[0]);
  if (PyErr_Occurred()) return NULL;
  char *expected;
  Py_ssize_t length;
  if (PyBytes_AsStringAndSize(args[1], &expected, &length) != 0) return NULL;
  PyObject *answer =
      address != NULL && memcmp(address, expected, (size_t)length) == 0 ? &_Py_TrueStruct : &_Py_FalseStruct;
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
  return wdl_py_counter_pair(created, unknown_deletes);
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, "bind(registry): the export registry dict."},
    {"export", (PyCFunction)(void (*)(void))export_struct, METH_FASTCALL,
     "export(template, owner) -> address of a new managed struct."},
    {"deleter", deleter, METH_NOARGS, "deleter() -> address of the deleter of exported structs."},
    {"counters", counters, METH_NOARGS, "counters() -> (created, unknown_deletes)."},
    {"set_js_deleter_caller", (PyCFunction)(void (*)(void))wdl_py_set_js_deleter_caller, METH_FASTCALL,
     "set_js_deleter_caller(index, on_failure): the JS function (table index) call_deleter goes through."},
    {"same_bytes", (PyCFunction)(void (*)(void))same_bytes, METH_FASTCALL,
     "same_bytes(address, expected) -> whether memory at address holds expected (adopt's fast path)."},
    {"set_deleter_fallback", (PyCFunction)(void (*)(void))wdl_py_set_deleter_fallback, METH_FASTCALL,
     "set_deleter_fallback(caller): caller(fn, address) calls deleters until JS's caller is set."},
    {"call_deleter", (PyCFunction)(void (*)(void))wdl_py_call_deleter, METH_FASTCALL,
     "call_deleter(fn, address): call a managed struct's deleter."},
    {"owner_type", wdl_py_owner_type, METH_NOARGS, "owner_type() -> the C base type of ManagedOwner (made once)."},
    {"owner_counters", wdl_py_owner_counters, METH_NOARGS, "owner_counters() -> (adopted, released)."},
    {"bind_adopt", (PyCFunction)(void (*)(void))wdl_py_bind_adopt, METH_FASTCALL,
     "bind_adopt(seen, Tensor, ManagedOwner, scopes, track): what adopt() uses (adopt.c)."},
    {"adopt", (PyCFunction)(void (*)(void))wdl_py_adopt, METH_FASTCALL,
     "adopt(address, versioned) -> the Tensor of a block adopt.py's cache holds unchanged, or None."},
    {"bind_take", (PyCFunction)(void (*)(void))wdl_py_bind_take, METH_FASTCALL,
     "bind_take(export_function, adopt): what take() uses (adopt.c)."},
    {"take", (PyCFunction)(void (*)(void))wdl_py_take, METH_FASTCALL,
     "take(value) -> the Tensor of JS's export of value (from_js's common case)."},
    {"import_managed_function", (PyCFunction)(void (*)(void))wdl_py_import_managed_function, METH_FASTCALL,
     "import_managed_function(adopt, doc, module) -> import_managed in C, bound to adopt (the full check)."},
    {"export_managed_function", (PyCFunction)(void (*)(void))wdl_py_export_managed_function, METH_FASTCALL,
     "export_managed_function(python_export_managed, Tensor, module) -> export_managed in C (a bound Tensor's case)."},
    {"from_js_function", (PyCFunction)(void (*)(void))wdl_py_from_js_function, METH_FASTCALL,
     "from_js_function(python_from_js, JsException, translate, module) -> from_js in C (copy=None in C)."},
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
