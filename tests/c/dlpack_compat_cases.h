/*
 * dlpack_compat_cases.h — the checks every include order of upstream dlpack.h
 * and webdlpack.h must pass (tests/c/test_dlpack_order_*.c include this after
 * the two headers, in their order). Whichever header defined the DLPack types,
 * tensors the library makes read correctly through them, and tensors the
 * "framework" fills in with them validate and wrap in the library.
 * The layout itself is checked at compile time by webdlpack/dlpack.h; these
 * cases check behaviour across the two translation units (the library is
 * always built with webdlpack's own definitions).
 */
#ifndef WDL_DLPACK_COMPAT_CASES_H_
#define WDL_DLPACK_COMPAT_CASES_H_

#include "harness.h"

/* The library's CPU tensor, read through this unit's DLPack types. */
static void compat_library_tensor_reads_back(void) {
  DLDataType f32;
  f32.code = kDLFloat;
  f32.bits = 32;
  f32.lanes = 1;
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned *t = wdl_managed_tensor_alloc_cpu(f32, 2, shape);
  CHECK(t != NULL);
  CHECK_EQ_INT(t->version.major, DLPACK_MAJOR_VERSION);
  CHECK_EQ_INT(t->version.minor, WDL_DLPACK_MINOR_VERSION); /* 1.1 even when upstream says 1.3 */
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLCPU);
  CHECK_EQ_INT(t->dl_tensor.ndim, 2);
  CHECK_EQ_INT(t->dl_tensor.shape[0], 2);
  CHECK_EQ_INT(t->dl_tensor.shape[1], 3);
  CHECK_EQ_INT(t->dl_tensor.dtype.code, kDLFloat);
  CHECK_EQ_INT(t->dl_tensor.dtype.bits, 32);
  CHECK_EQ_INT(t->dl_tensor.dtype.lanes, 1);
  CHECK_EQ_U64((uintptr_t)t->dl_tensor.data % 64, 0);
  float *data = (float *)t->dl_tensor.data;
  for (int i = 0; i < 6; i++) CHECK(data[i] == 0.0f);
  uint64_t nbytes = 0;
  CHECK_EQ_INT(wdl_tensor_nbytes(&t->dl_tensor, &nbytes), 0);
  CHECK_EQ_U64(nbytes, 24);
  t->deleter(t); /* the deleter type is this unit's */
}

static int g_compat_released;
static void compat_release(void *ctx) { g_compat_released += *(int *)ctx; }

/* A WebGPU tensor described with this unit's types, wrapped and validated by the library. */
static void compat_framework_view_wraps(void) {
  int64_t shape[1] = {16};
  int64_t strides[1] = {1};
  DLTensor view;
  memset(&view, 0, sizeof view);
  view.data = (void *)(uintptr_t)0x00100001u; /* a GPU pointer value: never dereferenced */
  view.device.device_type = kDLWebGPU;
  view.device.device_id = 0;
  view.ndim = 1;
  view.dtype.code = kDLFloat;
  view.dtype.bits = 16;
  view.dtype.lanes = 1;
  view.shape = shape;
  view.strides = strides;
  view.byte_offset = 0;
  CHECK_EQ_INT(wdl_tensor_validate(&view, 0), 0);
  int one = 1;
  g_compat_released = 0;
  DLManagedTensorVersioned *t = wdl_managed_tensor_create_from_view(
      &view, DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED, compat_release, &one);
  CHECK(t != NULL);
  CHECK_EQ_U64(t->flags, 3);
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLWebGPU);
  CHECK(t->dl_tensor.data == view.data);
  CHECK(t->dl_tensor.shape != shape && t->dl_tensor.shape[0] == 16);
  CHECK(t->dl_tensor.strides != NULL && t->dl_tensor.strides[0] == 1);
  CHECK_EQ_INT(wdl_managed_tensor_validate(t, 0), 0);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0);
  CHECK_EQ_INT(g_compat_released, 1);
}

/* A versioned tensor of another major from this unit is refused, as DLPack asks. */
static void compat_other_major_refused(void) {
  int64_t shape[1] = {4};
  float data[4];
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = DLPACK_MAJOR_VERSION + 1;
  t.dl_tensor.data = data;
  t.dl_tensor.device.device_type = kDLCPU;
  t.dl_tensor.ndim = 1;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  t.dl_tensor.shape = shape;
  CHECK_EQ_INT(wdl_managed_tensor_validate(&t, 0), -1);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "version.major");
}

#endif /* WDL_DLPACK_COMPAT_CASES_H_ */
