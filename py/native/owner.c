/*
 * owner.c — the C base type of ManagedOwner (webdlpack/exchange/owner.py): the consumer side of one managed
 * DLPack struct, whose deleter it calls exactly once — on release() or when the owner is deallocated.
 *
 * ManagedOwner subclasses it in Python (adding `alive`, repr and the refusal to be copied) without an
 * __init__ or __del__ of its own, so making, releasing and dropping an owner runs no Python frame: in
 * Pyodide a Python-level __init__ plus release cost about 0.4 µs per imported tensor. Instances hold no
 * Python objects (the address and deleter are plain integers), so the type needs no GC support.
 */
#include "native_module.h"

typedef struct {
  PyObject head;
  unsigned long address; /* the managed struct (uintptr_t-sized on wasm32 and LP64 hosts) */
  unsigned long deleter; /* its deleter, read by the caller; 0: none */
  char versioned;        /* DLManagedTensorVersioned (1) or legacy DLManagedTensor (0) */
  char live;             /* 1 until the deleter has been called (or there was none to call) */
} Owner;

_Static_assert(sizeof(unsigned long) == sizeof(void *), "address fields must be pointer-sized");

static PyObject *owner_type;
static size_t adopted, released;

/* The one release: mark released, count, call the deleter. 0, or -1 with the deleter's error raised. */
static int release_once(Owner *o) {
  if (!o->live) return 0;
  o->live = 0;
  released++;
  if (o->deleter == 0) return 0;
  return wdl_py_invoke_deleter((void *)(uintptr_t)o->deleter, (void *)(uintptr_t)o->address);
}

/* Owner(address: int, versioned: bool, deleter: int): takes ownership of the struct at `address`. */
static int owner_init(PyObject *self, PyObject *args, PyObject *kwds) {
  Owner *o = (Owner *)self;
  if (kwds != NULL || PyTuple_Size(args) != 3) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "ManagedOwner(address, versioned, deleter) takes 3 positional arguments");
    return -1;
  }
  if (o->live) {
    PyErr_SetString(PyExc_TypeError, "ManagedOwner is already initialised");
    return -1;
  }
  void *address = PyLong_AsVoidPtr(PyTuple_GetItem(args, 0));
  if (PyErr_Occurred()) return -1;
  int versioned = PyObject_IsTrue(PyTuple_GetItem(args, 1));
  if (versioned < 0) return -1;
  PyObject *d = PyTuple_GetItem(args, 2);
  void *deleter = d == &_Py_NoneStruct ? NULL : PyLong_AsVoidPtr(d);
  if (PyErr_Occurred()) return -1;
  o->address = (unsigned long)(uintptr_t)address;
  o->deleter = (unsigned long)(uintptr_t)deleter;
  o->versioned = (char)versioned;
  o->live = 1;
  adopted++;
  return 0;
}

PyObject *wdl_py_owner_make(PyObject *type, void *address, void *deleter, int versioned) {
  PyObject *self = ((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
  if (self == NULL) return NULL;
  Owner *o = (Owner *)self;
  o->address = (unsigned long)(uintptr_t)address;
  o->deleter = (unsigned long)(uintptr_t)deleter;
  o->versioned = (char)(versioned != 0);
  o->live = 1;
  adopted++;
  return self;
}

static PyObject *owner_release(PyObject *self, PyObject *unused) {
  (void)unused;
  return release_once((Owner *)self) == 0 ? wdl_py_none() : NULL;
}

static PyObject *owner_alive(PyObject *self, void *closure) {
  (void)closure;
  PyObject *answer = ((Owner *)self)->live ? &_Py_TrueStruct : &_Py_FalseStruct;
  Py_IncRef(answer);
  return answer;
}

/* Deallocation releases; a deleter's error cannot propagate from here and is reported as unraisable.
 * An exception pending in the code that dropped the owner is put aside meanwhile. */
static void owner_dealloc(PyObject *self) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (release_once((Owner *)self) != 0) PyErr_WriteUnraisable(NULL);
  PyErr_Restore(type, value, traceback);
  PyObject *tp = (PyObject *)self->ob_type;
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DecRef(tp); /* instances of a heap type hold a reference to it */
}

static PyMethodDef owner_methods[] = {
    {"release", owner_release, METH_NOARGS, "Call the deleter now (no-op if it already ran)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef owner_members[] = {
    {"address", T_ULONG, offsetof(Owner, address), READONLY, "Address of the managed struct."},
    {"versioned", T_BOOL, offsetof(Owner, versioned), READONLY, "DLManagedTensorVersioned (True) or legacy."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef owner_getset[] = {
    {"alive", owner_alive, NULL, "False once the deleter has run.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot owner_slots[] = {
    {Py_tp_doc, "Owns one managed DLPack struct and calls its deleter exactly once (C base of ManagedOwner)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, owner_init},
    {Py_tp_dealloc, owner_dealloc},
    {Py_tp_methods, owner_methods},
    {Py_tp_members, owner_members},
    {Py_tp_getset, owner_getset},
    {0, NULL},
};

static PyType_Spec owner_spec = {
    "webdlpack._native.exchange.Owner", (int)sizeof(Owner), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, owner_slots,
};

PyObject *wdl_py_owner_type(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  if (owner_type == NULL) {
    owner_type = PyType_FromSpec(&owner_spec);
    if (owner_type == NULL) return NULL;
  }
  Py_IncRef(owner_type);
  return owner_type;
}

PyObject *wdl_py_owner_counters(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return wdl_py_counter_pair(adopted, released);
}
