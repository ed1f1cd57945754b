/*
 * capsule_destructor.c — the destructor of the PyCapsules webdlpack's Python package exports.
 *
 * The array API asks a producer's capsule to call its struct's deleter when the capsule is dropped
 * unconsumed. A consumer may drop it while its own exception is set (NumPy does when it refuses a
 * capsule); Python code run then — a ctypes callback — would turn that exception into a SystemError.
 * So the destructor is C: it puts the pending exception aside, calls the struct's deleter (webdlpack's
 * own, which may run Python), and puts the exception back. A consumed capsule (renamed "used_...")
 * is left alone: its consumer calls the deleter.
 *
 * Built twice, loaded with ctypes.CDLL by webdlpack/exchange/capsule.py: as a Pyodide side module
 * (emcc -sSIDE_MODULE=1; shipped in the wheel) and natively for CPython (gcc -shared, next to the
 * package in a source checkout). The few Python C API functions used are declared here and resolved
 * from the interpreter that loads the library, so no Python headers are needed to build it.
 */
#include <stddef.h>

#include "python_abi.h"
#include "webdlpack/dlpack.h"

__attribute__((visibility("default"))) void wdl_py_capsule_destructor(PyObject *capsule);

void wdl_py_capsule_destructor(PyObject *capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor *m = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
  PyErr_Restore(type, value, traceback);
}
