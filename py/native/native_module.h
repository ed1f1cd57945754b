/*
 * native_module.h — what the C files of webdlpack's native module (exchange.c, deleters.c, owner.c, adopt.c,
 * functions.c) share.
 * Internal: nothing here is exported from the library but PyInit_exchange.
 */
#ifndef WEBDLPACK_NATIVE_MODULE_H
#define WEBDLPACK_NATIVE_MODULE_H

#include <stdint.h>
#include <string.h>

#include "python_abi.h"
#include "webdlpack/dlpack.h"

#define EXPORT __attribute__((visibility("default")))
#define INTERNAL __attribute__((visibility("hidden")))

/* A new reference to None. */
INTERNAL PyObject *wdl_py_none(void);
/* A new (a, b) tuple of two counters. */
INTERNAL PyObject *wdl_py_counter_pair(size_t a, size_t b);
/* 0 when nargs == want, else a TypeError with `message` and -1. */
INTERNAL int wdl_py_expect_args(Py_ssize_t nargs, Py_ssize_t want, const char *message);

/* Call deleter `fn` with `address` (deleters.c): 0, or -1 with the deleter's error raised. */
INTERNAL int wdl_py_invoke_deleter(void *fn, void *address);
/* set_js_deleter_caller(index, on_failure), set_deleter_fallback(caller), call_deleter(fn, address) (deleters.c). */
INTERNAL PyObject *wdl_py_set_js_deleter_caller(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_set_deleter_fallback(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_call_deleter(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* owner_type() and owner_counters() (owner.c). */
INTERNAL PyObject *wdl_py_owner_type(PyObject *self, PyObject *unused);
INTERNAL PyObject *wdl_py_owner_counters(PyObject *self, PyObject *unused);
/* A new owner of `type` (ManagedOwner) of the struct at `address`, as its __init__ makes one (owner.c). */
INTERNAL PyObject *wdl_py_owner_make(PyObject *type, void *address, void *deleter, int versioned);

/* bind_adopt(seen, Tensor, ManagedOwner, scopes, track), adopt(address, versioned), bind_take(export_function,
 * adopt), take(value) (adopt.c). */
INTERNAL PyObject *wdl_py_bind_adopt(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_adopt(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_bind_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* The Tensor of a block adopt.py's cache holds unchanged at `key`, else `miss` (adopt.c). */
INTERNAL PyObject *wdl_py_adopt_cached(PyObject *key, PyObject *versioned, PyObject *miss);
/* Where instances of `type` keep the __slots__ attributes `names` (offsets 0 when unsure), adopt.c. */
INTERNAL int wdl_py_find_slots(PyObject *type, PyObject *const *names, int count, Py_ssize_t *offsets);
/* import_managed_function(adopt, doc, module), export_managed_function(python_export_managed, Tensor, module),
 * from_js_function(python_from_js, JsException, translate, module): webdlpack.api.managed.import_managed,
 * webdlpack.api.managed.export_managed and webdlpack.from_js made in C (functions.c). */
INTERNAL PyObject *wdl_py_import_managed_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_export_managed_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
INTERNAL PyObject *wdl_py_from_js_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
