/*
 * adopt.c — adopting a managed struct seen before, in one C call (webdlpack's native module).
 *
 * webdlpack/exchange/adopt.py remembers each block it checked (the struct and its shape/strides arrays) by
 * address, in a dict whose entries are (versioned, nbytes, their bytes, deleter, view). A producer that hands
 * tensors over in a loop writes the same bytes at the same address again and again; when every byte is the
 * same, the checked view is valid again (it depends only on those bytes and on the memory size, which never
 * shrinks). Done in Python, that hit plus the owner and the Tensor around it cost about 1 µs in Pyodide (four
 * Python frames); here it is one call that returns the Tensor — or None, and Python does the full check.
 *
 * from_js's common case goes through here whole (take): JS's export, then this adopt.
 *
 * Nothing here is a second copy of the Python logic: the cache IS adopt.py's dict, the owner is owner.c's type
 * (ManagedOwner, made as its __init__ would), and the Tensor gets the four slots Tensor._wrap sets, and goes to
 * the open scopes as _wrap sends it (the track function, when webdlpack.scope blocks are open). All of them are
 * handed over once by bind_adopt().
 */
#include "native_module.h"

static PyObject *seen;             /* adopt.py's _SEEN dict */
static PyObject *tensor_type;      /* webdlpack.Tensor */
static PyObject *owner_type;       /* ManagedOwner (owner.c's type, subclassed in Python) */
static PyObject *scopes;           /* the ContextVar of open scopes (a tuple, () when none) */
static PyObject *track;            /* track(tensor): adds a tensor to the innermost open scope */
static PyObject *slot_names[4];    /* _view, _owner, _templates, _exporter (interned) */
static Py_ssize_t slot_offsets[4]; /* where a Tensor keeps them (wdl_py_find_slots); 0: set by name instead */
static allocfunc tensor_alloc;
static PyObject *export_function; /* () -> (exportVersioned, caller index, take error) (bind_take) */
static PyObject *export_js;       /* JS's exportVersioned, once asked */
static PyObject *full_adopt;      /* adopt(address, versioned): the full check (bind_take) */

/* JS's export caller (Pyodide, js/src/bridge/pyodide-callers.ts): called with a PyObject*, it returns the address
 * of a new versioned struct for a JsProxy's JS value, 0 for anything else, or EXPORT_FAILED when JS threw (the
 * error is kept for export_failure, which raises it). NULL where there is none: every call goes through export_js. */
typedef uintptr_t (*js_export_caller)(PyObject *value);
#define EXPORT_FAILED UINTPTR_MAX /* 0xFFFFFFFF on wasm32 (JS returns -1) */
static js_export_caller export_caller;
static PyObject *export_failure;

/* Find where instances of `type` store each of the `count` (at most 8) __slots__ attributes `names`: set each on a
 * probe instance to a distinct object (its own name) and look for that pointer in the instance. Writing there later
 * is what the slot's descriptor does (new reference in, NULL before), without looking the descriptor up per call.
 * Any doubt (a slot not found exactly once) leaves every offset 0: the caller then goes by name. 0, or -1 with an
 * error. */
int wdl_py_find_slots(PyObject *type, PyObject *const *names, int count, Py_ssize_t *offsets) {
  for (int i = 0; i < count; i++) offsets[i] = 0;
  if (count > 8) {
    PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: at most 8 slots are looked up at once");
    return -1;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  if (alloc == NULL) return -1;
  PyObject *size = PyObject_GetAttrString(type, "__basicsize__");
  Py_ssize_t basicsize = size != NULL ? PyLong_AsSsize_t(size) : -1;
  Py_DecRef(size);
  if (basicsize < 0) return -1;
  PyObject *probe = alloc(type, 0);
  if (probe == NULL) return -1;
  Py_ssize_t found[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int ok = 1;
  for (int i = 0; i < count && ok; i++) ok = PyObject_SetAttr(probe, names[i], names[i]) == 0;
  for (Py_ssize_t at = (Py_ssize_t)sizeof(PyObject); ok && at + (Py_ssize_t)sizeof(PyObject *) <= basicsize;
       at += (Py_ssize_t)sizeof(PyObject *)) {
    PyObject *word = *(PyObject **)((char *)probe + at);
    for (int i = 0; i < count; i++) {
      if (word != names[i]) continue;
      ok = found[i] == 0;
      found[i] = at;
    }
  }
  Py_DecRef(probe);
  if (!ok) return -1;
  for (int i = 0; i < count; i++) {
    if (found[i] == 0) return 0;
  }
  for (int i = 0; i < count; i++) offsets[i] = found[i];
  return 0;
}

static int is_type(PyObject *o) { return (PyType_GetFlags(o->ob_type) & Py_TPFLAGS_TYPE_SUBCLASS) != 0; }

/* bind_adopt(seen, Tensor, ManagedOwner, scopes, track) -> None. */
PyObject *wdl_py_bind_adopt(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 5, "bind_adopt(seen, Tensor, ManagedOwner, scopes, track) takes 5 arguments") != 0)
    return NULL;
  if (PyDict_Size(args[0]) < 0) return NULL;
  if (PyCallable_Check(args[4]) != 1) {
    PyErr_SetString(PyExc_TypeError, "bind_adopt: track must be callable");
    return NULL;
  }
  static const char *names[4] = {"_view", "_owner", "_templates", "_exporter"};
  for (int i = 0; i < 4; i++) {
    if (slot_names[i] == NULL && (slot_names[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
  }
  if (!is_type(args[1]) || !is_type(args[2])) {
    PyErr_SetString(PyExc_TypeError, "bind_adopt: Tensor and ManagedOwner must be types");
    return NULL;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(args[1], Py_tp_alloc);
  if (alloc == NULL) return NULL;
  if (wdl_py_find_slots(args[1], slot_names, 4, slot_offsets) != 0) return NULL;
  PyObject **targets[5] = {&seen, &tensor_type, &owner_type, &scopes, &track};
  for (int i = 0; i < 5; i++) {
    Py_IncRef(args[i]);
    Py_DecRef(*targets[i]);
    *targets[i] = args[i];
  }
  tensor_alloc = alloc;
  return wdl_py_none();
}

/* A Tensor over `view` owned by `owner` (both borrowed), sent to the open scopes as Tensor._wrap does. */
static PyObject *wrap(PyObject *view, PyObject *owner) {
  PyObject *tensor = tensor_alloc(tensor_type, 0);
  if (tensor == NULL) return NULL;
  PyObject *values[4] = {view, owner, &_Py_NoneStruct, &_Py_NoneStruct};
  for (int i = 0; i < 4; i++) {
    if (slot_offsets[i] != 0) { /* a fresh instance: NULL there before */
      Py_IncRef(values[i]);
      *(PyObject **)((char *)tensor + slot_offsets[i]) = values[i];
    } else if (PyObject_SetAttr(tensor, slot_names[i], values[i]) != 0) {
      Py_DecRef(tensor);
      return NULL;
    }
  }
  PyObject *open = NULL;
  if (PyContextVar_Get(scopes, NULL, &open) != 0 || open == NULL) {
    Py_DecRef(tensor);
    return NULL;
  }
  Py_ssize_t depth = PyTuple_Size(open);
  Py_DecRef(open);
  if (depth < 0) {
    Py_DecRef(tensor);
    return NULL;
  }
  if (depth > 0) {
    PyObject *r = PyObject_CallOneArg(track, tensor);
    if (r == NULL) {
      Py_DecRef(tensor);
      return NULL;
    }
    Py_DecRef(r);
  }
  return tensor;
}

/* The Tensor owning the struct at address `key` (an int) when adopt.py's cache holds a block at that address,
 * of the same kind (`versioned` is the very bool stored), whose bytes are all still the same. Otherwise `miss`
 * (a new reference unless NULL; nothing was taken: the caller adopts with the full check), or NULL with an
 * error set. */
PyObject *wdl_py_adopt_cached(PyObject *key, PyObject *versioned, PyObject *miss) {
  if (seen == NULL) {
    PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: bind_adopt() was not called");
    return NULL;
  }
  PyObject *entry = PyDict_GetItemWithError(seen, key); /* borrowed */
  if (entry == NULL && PyErr_Occurred()) return NULL;
  if (entry == NULL || PyTuple_Size(entry) != 5 || PyTuple_GetItem(entry, 0) != versioned) {
    if (PyErr_Occurred()) return NULL;
    if (miss != NULL) Py_IncRef(miss);
    return miss;
  }
  void *address = PyLong_AsVoidPtr(key);
  if (PyErr_Occurred()) return NULL;
  char *expected;
  Py_ssize_t length;
  if (PyBytes_AsStringAndSize(PyTuple_GetItem(entry, 2), &expected, &length) != 0) return NULL;
  /* The range was inside memory when it was checked, and wasm memory never shrinks (adopt.py caches in Pyodide only).
   */
  if (address == NULL || memcmp(address, expected, (size_t)length) != 0) {
    if (miss != NULL) Py_IncRef(miss);
    return miss;
  }
  void *deleter = PyLong_AsVoidPtr(PyTuple_GetItem(entry, 3));
  if (PyErr_Occurred()) return NULL;
  PyObject *owner = wdl_py_owner_make(owner_type, address, deleter, versioned == &_Py_TrueStruct);
  if (owner == NULL) return NULL;
  PyObject *tensor = wrap(PyTuple_GetItem(entry, 4), owner);
  Py_DecRef(owner); /* on failure this releases: the deleter runs, as when adopt.py refuses a struct */
  return tensor;
}

/* adopt(address: int, versioned: bool) -> Tensor | None: see wdl_py_adopt_cached (None on a miss). */
PyObject *wdl_py_adopt(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 2, "adopt(address, versioned) takes 2 arguments") != 0) return NULL;
  return wdl_py_adopt_cached(args[0], args[1], &_Py_NoneStruct);
}

/* Ask export_function once for JS's export function, caller index and failure function. 0, or -1 with an error. */
static int bind_export(void) {
  PyObject *got = PyObject_CallNoArgs(export_function);
  if (got == NULL) return -1;
  Py_ssize_t n = PyTuple_Size(got); /* -1 with an error set when `got` is no tuple */
  void *index = n == 3 ? PyLong_AsVoidPtr(PyTuple_GetItem(got, 1)) : NULL;
  if (n != 3 || PyErr_Occurred() || (index != NULL && PyCallable_Check(PyTuple_GetItem(got, 2)) != 1)) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "bind_take: export_function() must return (function, index, on_failure)");
    Py_DecRef(got);
    return -1;
  }
  PyObject *fn = PyTuple_GetItem(got, 0), *failure = PyTuple_GetItem(got, 2);
  Py_IncRef(fn);
  Py_IncRef(failure);
  export_js = fn;
  export_failure = failure;
  export_caller = (js_export_caller)index;
  Py_DecRef(got);
  return 0;
}

/* The address (a new int) of the struct JS exported for `value`, or NULL with JS's error raised. Through JS's
 * caller when `value` is a JsProxy (no Python -> JS call), else through export_js as any Python -> JS call. */
static PyObject *export_value(PyObject *value) {
  if (export_caller != NULL) {
    uintptr_t address = export_caller(value);
    if (address == EXPORT_FAILED) {
      PyObject *r = PyObject_CallNoArgs(export_failure); /* raises the JS error (a JsException) */
      Py_DecRef(r);
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "take: JS's export failed without an error");
      return NULL;
    }
    if (address != 0) return PyLong_FromSize_t((size_t)address);
  }
  return PyObject_CallOneArg(export_js, value);
}

/* take(value) -> Tensor
 *
 * from_js's common case in one call: JS's exportVersioned(value) (the unsigned address of a versioned managed
 * struct JS wrote, which Python now owns; asked of `export_function` once, with JS's caller that reaches it from
 * C for a JsProxy), then the Tensor of that struct — made here when adopt.py's cache holds its block unchanged,
 * else by `adopt(address, True)` (the full check). An error of the export (a JS error) propagates as it is:
 * nothing was taken. */
PyObject *wdl_py_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 1, "take(value) takes 1 argument") != 0) return NULL;
  if (export_function == NULL || full_adopt == NULL) {
    PyErr_SetString(PyExc_ValueError, "webdlpack native exchange: bind_take() was not called");
    return NULL;
  }
  if (export_js == NULL && bind_export() != 0) return NULL;
  PyObject *address = export_value(args[0]);
  if (address == NULL) return NULL;
  if (address->ob_type != (void *)&PyLong_Type) {
    Py_DecRef(address);
    PyErr_SetString(PyExc_TypeError, "take: JS's export did not return an address (int)");
    return NULL;
  }
  PyObject *tensor = wdl_py_adopt_cached(address, &_Py_TrueStruct, NULL);
  if (tensor == NULL && !PyErr_Occurred()) {
    PyObject *pair[2] = {address, &_Py_TrueStruct};
    tensor = PyObject_Vectorcall(full_adopt, pair, 2, NULL);
  }
  Py_DecRef(address);
  return tensor;
}

/* bind_take(export_function, adopt) -> None: what take() uses (export_function() is asked on first use). */
PyObject *wdl_py_bind_take(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 2, "bind_take(export_function, adopt) takes 2 arguments") != 0) return NULL;
  if (PyCallable_Check(args[0]) != 1 || PyCallable_Check(args[1]) != 1) {
    PyErr_SetString(PyExc_TypeError, "bind_take: export_function and adopt must be callable");
    return NULL;
  }
  PyObject **targets[2] = {&export_function, &full_adopt};
  for (int i = 0; i < 2; i++) {
    Py_IncRef(args[i]);
    Py_DecRef(*targets[i]);
    *targets[i] = args[i];
  }
  Py_DecRef(export_js);
  Py_DecRef(export_failure);
  export_js = export_failure = NULL;
  export_caller = NULL;
  return wdl_py_none();
}
