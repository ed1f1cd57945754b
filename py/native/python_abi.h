/*
 * python_abi.h — the few pieces of CPython's stable ABI that webdlpack's native module uses.
 *
 * The module is built for two interpreters: Pyodide (CPython 3.14 compiled to wasm32; no Python
 * headers exist for it on a build machine without Pyodide's cross-build environment) and the CPython
 * that runs the tests natively. Both export the same stable-ABI functions, and the stable ABI fixes
 * the layout of every struct declared here, so the module declares them itself instead of including
 * Python.h. Only what the module needs is declared; the names and layouts are CPython's.
 */
#ifndef WEBDLPACK_PYTHON_ABI_H
#define WEBDLPACK_PYTHON_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef intptr_t Py_ssize_t;

/* The head of every object (non-free-threaded builds): reference count, then the type. */
typedef struct _object {
  Py_ssize_t ob_refcnt;
  void *ob_type;
} PyObject;

/* A METH_FASTCALL function: self, a C array of `nargs` borrowed arguments. */
typedef PyObject *(*PyFastCFunction)(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
typedef PyObject *(*PyCFunction)(PyObject *self, PyObject *args);

/* One module function: its name, the C function, its calling convention (METH_*), its docstring. */
typedef struct PyMethodDef {
  const char *ml_name;
  PyCFunction ml_meth;
  int ml_flags;
  const char *ml_doc;
} PyMethodDef;

#define METH_KEYWORDS 0x0002
#define METH_NOARGS 0x0004
#define METH_FASTCALL 0x0080

/* PyModuleDef_HEAD_INIT's target: an object head, then the interpreter's own bookkeeping. */
typedef struct PyModuleDef_Base {
  PyObject ob_base;
  PyObject *(*m_init)(void);
  Py_ssize_t m_index;
  PyObject *m_copy;
} PyModuleDef_Base;

typedef struct PyModuleDef_Slot {
  int slot;
  void *value;
} PyModuleDef_Slot;

/* A module's definition: name, docstring, per-module state size (-1: none, single-phase), functions. */
typedef struct PyModuleDef {
  PyModuleDef_Base m_base;
  const char *m_name;
  const char *m_doc;
  Py_ssize_t m_size;
  PyMethodDef *m_methods;
  PyModuleDef_Slot *m_slots;
  void *m_traverse;
  void *m_clear;
  void *m_free;
} PyModuleDef;

/* A heap type made from a spec (PyType_FromSpec): name, instance size, flags, and its slots (Py_tp_*). */
typedef struct PyType_Slot {
  int slot;
  void *pfunc;
} PyType_Slot;

typedef struct PyType_Spec {
  const char *name;
  int basicsize;
  int itemsize;
  unsigned int flags;
  PyType_Slot *slots;
} PyType_Spec;

#define Py_TPFLAGS_BASETYPE (1UL << 10)
#define Py_TPFLAGS_DEFAULT (1UL << 18) /* Py_TPFLAGS_HAVE_VERSION_TAG */
#define Py_TPFLAGS_TYPE_SUBCLASS (1UL << 31)
#define Py_tp_alloc 47
#define Py_tp_dealloc 52
#define Py_tp_doc 56
#define Py_tp_init 60
#define Py_tp_methods 64
#define Py_tp_new 65
#define Py_tp_members 72
#define Py_tp_getset 73
#define Py_tp_free 74

/* A read-only attribute stored in the instance (T_* type code, byte offset). */
typedef struct PyMemberDef {
  const char *name;
  int type;
  Py_ssize_t offset;
  int flags;
  const char *doc;
} PyMemberDef;

#define T_ULONG 12
#define T_BOOL 14
#define READONLY 1

/* A computed attribute. */
typedef PyObject *(*getter)(PyObject *self, void *closure);
typedef struct PyGetSetDef {
  const char *name;
  getter get;
  void *set;
  const char *doc;
  void *closure;
} PyGetSetDef;

typedef void (*freefunc)(void *);
typedef PyObject *(*allocfunc)(PyObject *type, Py_ssize_t nitems);

extern PyObject *PyType_FromSpec(PyType_Spec *spec);
extern void *PyType_GetSlot(void *type, int slot);
extern unsigned long PyType_GetFlags(void *type);
extern PyObject *PyType_GenericNew(void *type, PyObject *args, PyObject *kwds);
extern void PyErr_WriteUnraisable(PyObject *obj);

typedef void (*PyCapsule_Destructor)(PyObject *);
typedef int PyGILState_STATE;

extern PyObject *PyModuleDef_Init(PyModuleDef *def);
extern PyObject *PyLong_FromVoidPtr(void *p);
extern PyObject *PyLong_FromSize_t(size_t v);
extern void *PyLong_AsVoidPtr(PyObject *o);
extern Py_ssize_t PyLong_AsSsize_t(PyObject *o);
extern int PyObject_IsTrue(PyObject *o);
extern int PyCallable_Check(PyObject *o);
extern PyObject *PyObject_CallNoArgs(PyObject *callable);
extern PyObject *PyObject_CallOneArg(PyObject *callable, PyObject *arg);
extern PyObject *PyObject_Vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames);
extern PyObject *PyObject_GetAttrString(PyObject *o, const char *name);
extern int PyObject_SetAttr(PyObject *o, PyObject *name, PyObject *value);
extern PyObject *PyUnicode_InternFromString(const char *s);
extern const char *PyUnicode_AsUTF8AndSize(PyObject *unicode, Py_ssize_t *size);
extern int PyUnicode_CompareWithASCIIString(PyObject *unicode, const char *string);
extern PyObject *PyCFunction_NewEx(PyMethodDef *def, PyObject *self, PyObject *module);
extern int PyContextVar_Get(PyObject *var, PyObject *default_value, PyObject **value);
extern PyObject *PyObject_Call(PyObject *callable, PyObject *args, PyObject *kwargs);
extern PyObject *PyByteArray_FromStringAndSize(const char *s, Py_ssize_t n);
extern char *PyByteArray_AsString(PyObject *o);
extern int PyBytes_AsStringAndSize(PyObject *o, char **buffer, Py_ssize_t *length);
extern PyObject *PyTuple_Pack(Py_ssize_t n, ...);
extern Py_ssize_t PyTuple_Size(PyObject *t);
extern PyObject *PyTuple_GetItem(PyObject *t, Py_ssize_t i);
extern int PyDict_SetItem(PyObject *d, PyObject *key, PyObject *value);
extern PyObject *PyDict_GetItemWithError(PyObject *d, PyObject *key);
extern int PyDict_DelItem(PyObject *d, PyObject *key);
extern Py_ssize_t PyDict_Size(PyObject *d);
extern PyObject *PyCapsule_New(void *pointer, const char *name, PyCapsule_Destructor destructor);
extern int PyCapsule_IsValid(PyObject *capsule, const char *name);
extern void *PyCapsule_GetPointer(PyObject *capsule, const char *name);
extern void Py_IncRef(PyObject *o);
extern void Py_DecRef(PyObject *o);
extern PyObject *PyErr_Occurred(void);
extern void PyErr_Fetch(PyObject **type, PyObject **value, PyObject **traceback);
extern void PyErr_Restore(PyObject *type, PyObject *value, PyObject *traceback);
extern void PyErr_Clear(void);
extern void PyErr_SetString(PyObject *type, const char *message);
extern PyObject *PyErr_Format(PyObject *type, const char *format, ...);
extern void PyErr_SetObject(PyObject *type, PyObject *value);
extern int PyErr_ExceptionMatches(PyObject *exc);
extern void PyErr_NormalizeException(PyObject **type, PyObject **value, PyObject **traceback);
extern void PyException_SetCause(PyObject *exception, PyObject *cause);
extern PyGILState_STATE PyGILState_Ensure(void);
extern void PyGILState_Release(PyGILState_STATE state);
extern PyObject *PyExc_TypeError;
extern PyObject *PyExc_ValueError;
extern PyObject *PyExc_MemoryError;
extern PyObject PyLong_Type; /* only its address is used (a type check) */
extern PyObject _Py_NoneStruct;
extern PyObject _Py_TrueStruct;
extern PyObject _Py_FalseStruct;

#endif
