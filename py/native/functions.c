/*
 * functions.c — three of webdlpack's public functions made in C by the native module:
 * webdlpack.api.managed.import_managed and webdlpack.from_js for Pyodide (where adopt.py keeps its cache of checked
 * blocks), and webdlpack.api.managed.export_managed wherever the module loads. Each is the Python function's common
 * case without a Python frame before the native call (about 0.06-0.1 µs of a 1.5-2 µs exchange in Pyodide), carries the
 * Python function's docstring and signature, and hands every other case to Python: import_managed a miss of the cache
 * to from_dlpack.adopt (the full check), from_js a `copy` other than None to the Python from_js itself, export_managed
 * anything but a Tensor that has exported before (given alone) to the Python export_managed.
 */
#include <stdlib.h>

#include "native_module.h"

/* Arguments of a METH_FASTCALL | METH_KEYWORDS call of `name`() into values[0..count) (defaults there beforehand;
 * NULL: must be given): the first `positional` names may come by position, any by keyword. 0, or -1 with a TypeError
 * naming the function and the argument, as Python's own message for a `def` would. */
static int parse(const char *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *const *names,
                 int count, int positional, PyObject **values) {
  if (nargs > positional) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)", name, positional,
                 positional == 1 ? "" : "s", nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) values[i] = args[i];
  Py_ssize_t keywords = kwnames != NULL ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = 0; k < keywords; k++) {
    PyObject *key = PyTuple_GetItem(kwnames, k);
    int at = 0;
    while (at < count && PyUnicode_CompareWithASCIIString(key, names[at]) != 0) at++;
    if (at == count) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", name, key);
      return -1;
    }
    if (at < nargs) {
      PyErr_Format(PyExc_TypeError, "%s() got argument '%s' given twice (by position and by keyword)", name, names[at]);
      return -1;
    }
    values[at] = args[nargs + k];
  }
  for (int i = 0; i < count; i++) {
    if (values[i] == NULL) {
      PyErr_Format(PyExc_TypeError, "%s() missing its required argument '%s' (a required argument is missing)", name,
                   names[i]);
      return -1;
    }
  }
  return 0;
}

/* A builtin for `def` whose self is `self`, named in `module`, with the text signature `signature` ("name(...)\n
 * --\n\n") then `doc` (Python's docstring) as its docstring: written once, on the first call (one such function
 * per process). */
static PyObject *make(PyMethodDef *def, const char *signature, PyObject *doc, PyObject *self, PyObject *module) {
  Py_ssize_t length;
  const char *text = PyUnicode_AsUTF8AndSize(doc, &length);
  if (text == NULL) return NULL;
  if (def->ml_doc == NULL) {
    size_t head = strlen(signature);
    char *whole = malloc(head + (size_t)length + 1);
    if (whole == NULL) {
      PyErr_SetString(PyExc_MemoryError, "webdlpack native exchange: no memory for a docstring");
      return NULL;
    }
    memcpy(whole, signature, head);
    memcpy(whole + head, text, (size_t)length + 1);
    def->ml_doc = whole; /* kept: the function points at it */
  }
  return PyCFunction_NewEx(def, self, module);
}

/* import_managed(address, versioned=True) -> Tensor: the Tensor of a block adopt.py's cache holds unchanged, else
 * full(address, versioned) (from_dlpack.adopt: the full check; the function's self). */
static PyObject *import_managed(PyObject *full, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[2] = {"address", "versioned"};
  PyObject *values[2] = {NULL, &_Py_TrueStruct};
  if (parse("import_managed", args, nargs, kwnames, names, 2, 2, values) != 0) return NULL;
  PyObject *tensor = wdl_py_adopt_cached(values[0], values[1], NULL);
  if (tensor != NULL || PyErr_Occurred()) return tensor;
  return PyObject_Vectorcall(full, values, 2, NULL);
}

static PyMethodDef import_managed_def = {"import_managed", (PyCFunction)(void (*)(void))import_managed,
                                         METH_FASTCALL | METH_KEYWORDS, NULL};

/* import_managed_function(adopt, doc, module) -> import_managed bound to `adopt`, with `doc`. */
PyObject *wdl_py_import_managed_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 3, "import_managed_function(adopt, doc, module) takes 3 arguments") != 0) return NULL;
  if (PyCallable_Check(args[0]) != 1) {
    PyErr_SetString(PyExc_TypeError, "import_managed_function: adopt must be callable");
    return NULL;
  }
  return make(&import_managed_def, "import_managed(address, versioned=True)\n--\n\n", args[1], args[0], args[2]);
}

static PyObject *export_tensor;       /* webdlpack.Tensor: export_managed's common case is exactly this type */
static Py_ssize_t exporter_offset[1]; /* where a Tensor keeps _exporter; 0: unknown, every call goes to Python */

/* export_managed(x, versioned=True) -> int: for exactly a Tensor given alone whose _exporter is bound (it has exported
 * before and is not disposed), that exporter's address (export.c's export of its template: no Python frame), as the
 * Python function's first branch does; every other call to the Python function (the function's self). */
static PyObject *export_managed(PyObject *python_export, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs == 1 && kwnames == NULL && exporter_offset[0] != 0 && (PyObject *)args[0]->ob_type == export_tensor) {
    PyObject *exporter = *(PyObject **)((char *)args[0] + exporter_offset[0]);
    if (exporter != NULL && exporter != &_Py_NoneStruct) {
      Py_IncRef(exporter); /* held through the call, whatever it does to the tensor */
      PyObject *address = PyObject_CallNoArgs(exporter);
      Py_DecRef(exporter);
      return address;
    }
  }
  return PyObject_Vectorcall(python_export, args, (size_t)nargs, kwnames);
}

static PyMethodDef export_managed_def = {"export_managed", (PyCFunction)(void (*)(void))export_managed,
                                         METH_FASTCALL | METH_KEYWORDS, NULL};

/* export_managed_function(python_export_managed, Tensor, module) -> export_managed bound to them, with the Python
 * function's docstring. */
PyObject *wdl_py_export_managed_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 3,
                         "export_managed_function(python_export_managed, Tensor, module) takes 3 arguments") != 0)
    return NULL;
  if (PyCallable_Check(args[0]) != 1 || (PyType_GetFlags(args[1]->ob_type) & Py_TPFLAGS_TYPE_SUBCLASS) == 0) {
    PyErr_SetString(PyExc_TypeError, "export_managed_function: python_export_managed must be callable, Tensor a type");
    return NULL;
  }
  PyObject *name = PyUnicode_InternFromString("_exporter");
  if (name == NULL) return NULL;
  Py_ssize_t offset[1];
  int found = wdl_py_find_slots(args[1], &name, 1, offset);
  Py_DecRef(name);
  if (found != 0) return NULL; /* nothing changed: a function made before keeps its type and offset */
  PyObject *doc = PyObject_GetAttrString(args[0], "__doc__");
  if (doc == NULL) return NULL;
  PyObject *made = make(&export_managed_def, "export_managed(x, versioned=True)\n--\n\n", doc, args[0], args[2]);
  Py_DecRef(doc);
  if (made == NULL) return NULL;
  Py_IncRef(args[1]);
  Py_DecRef(export_tensor);
  export_tensor = args[1];
  exporter_offset[0] = offset[0];
  return made;
}

static PyObject *js_exception; /* pyodide.ffi.JsException: what a JS error raises in Python */
static PyObject *translate;    /* translate(exc) -> the typed webdlpack error for a JsException */

/* from_js(js_tensor, *, copy=None) -> Tensor: with copy None, take(js_tensor) (adopt.c), a JS error raised as
 * translate(error) (from None); any other copy: python_from_js (the function's self) does it all. */
static PyObject *from_js(PyObject *python_from_js, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[2] = {"js_tensor", "copy"};
  PyObject *values[2] = {NULL, &_Py_NoneStruct};
  if (parse("from_js", args, nargs, kwnames, names, 2, 1, values) != 0) return NULL;
  if (values[1] != &_Py_NoneStruct) return PyObject_Vectorcall(python_from_js, args, (size_t)nargs, kwnames);
  PyObject *tensor = wdl_py_take(NULL, values, 1);
  if (tensor != NULL || !PyErr_ExceptionMatches(js_exception)) return tensor;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyObject *typed = value != NULL ? PyObject_CallOneArg(translate, value) : NULL;
  Py_DecRef(type);
  Py_DecRef(value);
  Py_DecRef(traceback);
  if (typed == NULL) return NULL;
  PyException_SetCause(typed, NULL); /* `raise typed from None`: no cause, the JS error's context suppressed */
  PyErr_SetObject((PyObject *)typed->ob_type, typed);
  Py_DecRef(typed);
  return NULL;
}

static PyMethodDef from_js_def = {"from_js", (PyCFunction)(void (*)(void))from_js, METH_FASTCALL | METH_KEYWORDS, NULL};

/* from_js_function(python_from_js, JsException, translate, module) -> from_js bound to them, with python_from_js's
 * docstring. take() must be bound (bind_take). */
PyObject *wdl_py_from_js_function(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (wdl_py_expect_args(nargs, 4,
                         "from_js_function(python_from_js, JsException, translate, module) takes 4 arguments") != 0)
    return NULL;
  if (PyCallable_Check(args[0]) != 1 || PyCallable_Check(args[2]) != 1) {
    PyErr_SetString(PyExc_TypeError, "from_js_function: python_from_js and translate must be callable");
    return NULL;
  }
  PyObject *doc = PyObject_GetAttrString(args[0], "__doc__");
  if (doc == NULL) return NULL;
  PyObject *made = make(&from_js_def, "from_js(js_tensor, *, copy=None)\n--\n\n", doc, args[0], args[3]);
  Py_DecRef(doc);
  if (made == NULL) return NULL;
  PyObject **targets[2] = {&js_exception, &translate};
  for (int i = 0; i < 2; i++) {
    Py_IncRef(args[1 + i]);
    Py_DecRef(*targets[i]);
    *targets[i] = args[1 + i];
  }
  return made;
}
