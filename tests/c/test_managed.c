/*
 * test_managed.c — managed tensors the library makes: one block, copied
 * shape/strides, deleter once, data_release once, owned CPU data.
 */
#include <stdlib.h>

#include "harness.h"
#include "webdlpack/webdlpack.h"

static int g_release_calls;
static void *g_release_ctx;
static void count_release(void *ctx) {
  g_release_calls++;
  g_release_ctx = ctx;
}

static const DLDevice k_cpu = {kDLCPU, 0};
static const DLDataType k_f32 = {kDLFloat, 32, 1};

static void create_then_release_once(void) {
  g_release_calls = 0;
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  int ctx_marker = 7;
  DLManagedTensorVersioned *t = wdl_managed_tensor_create(k_cpu, k_f32, 2, shape, NULL, data, 0,
                                                          DLPACK_FLAG_BITMASK_READ_ONLY, count_release, &ctx_marker);
  CHECK(t != NULL);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 1);
  CHECK_EQ_INT(t->version.major, DLPACK_MAJOR_VERSION);
  CHECK_EQ_INT(t->version.minor, DLPACK_MINOR_VERSION);
  CHECK(t->deleter != NULL);
  CHECK(t->manager_ctx != NULL);
  CHECK_EQ_U64(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(t->dl_tensor.data == data);
  /* NULL strides become C-contiguous ones in the block (DLPack 1.2: never NULL when ndim > 0) */
  CHECK(t->dl_tensor.strides == t->dl_tensor.shape + 2);
  CHECK_EQ_INT(t->dl_tensor.strides[0], 3);
  CHECK_EQ_INT(t->dl_tensor.strides[1], 1);
  /* shape is copied into the block, right after the struct */
  CHECK(t->dl_tensor.shape != shape);
  CHECK((char *)t->dl_tensor.shape > (char *)t);
  shape[0] = 99;
  CHECK_EQ_INT(t->dl_tensor.shape[0], 2);
  CHECK_EQ_INT(t->dl_tensor.shape[1], 3);
  CHECK_EQ_INT(g_release_calls, 0);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0);
  CHECK_EQ_INT(g_release_calls, 1);
  CHECK(g_release_ctx == &ctx_marker);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 0);
}

static void create_copies_strides(void) {
  float data[12];
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 3}; /* column-major */
  DLManagedTensorVersioned *t = wdl_managed_tensor_create(k_cpu, k_f32, 2, shape, strides, data, 0, 0, NULL, NULL);
  CHECK(t != NULL);
  CHECK(t->dl_tensor.strides != NULL && t->dl_tensor.strides != strides);
  strides[0] = 42;
  CHECK_EQ_INT(t->dl_tensor.strides[0], 1);
  CHECK_EQ_INT(t->dl_tensor.strides[1], 3);
  CHECK(t->dl_tensor.strides == t->dl_tensor.shape + 2);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0);
}

static void create_scalar_and_empty(void) {
  double x = 1.5;
  DLDataType f64 = {kDLFloat, 64, 1};
  DLManagedTensorVersioned *s = wdl_managed_tensor_create(k_cpu, f64, 0, NULL, NULL, &x, 0, 0, NULL, NULL);
  CHECK(s != NULL);
  CHECK(s->dl_tensor.shape == NULL);
  CHECK_EQ_INT(s->dl_tensor.ndim, 0);
  wdl_managed_tensor_release(s);
  int64_t shape[1] = {0};
  DLManagedTensorVersioned *e = wdl_managed_tensor_create(k_cpu, f64, 1, shape, NULL, NULL, 0, 0, NULL, NULL);
  CHECK(e != NULL);
  CHECK(e->dl_tensor.data == NULL);
  wdl_managed_tensor_release(e);
}

static void create_invalid_does_not_release(void) {
  g_release_calls = 0;
  float data[6];
  int64_t shape[2] = {2, -3};
  DLManagedTensorVersioned *t =
      wdl_managed_tensor_create(k_cpu, k_f32, 2, shape, NULL, data, 0, 0, count_release, NULL);
  CHECK(t == NULL);
  CHECK_ERROR(WDL_BAD_SHAPE, "DLTensor.shape[1]");
  CHECK_EQ_INT(g_release_calls, 0);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 0);
}

static void create_bad_flags(void) {
  float data[1];
  int64_t shape[1] = {1};
  DLManagedTensorVersioned *t = wdl_managed_tensor_create(k_cpu, k_f32, 1, shape, NULL, data, 0, 1u << 3, NULL, NULL);
  CHECK(t == NULL);
  CHECK_ERROR(WDL_BAD_FLAGS, "value 0x8");
}

/* A uint8 CPU view of `data` with `ndim` extents `shape` (no strides, no offset). */
static DLTensor u8_view(uint8_t *data, int32_t ndim, int64_t *shape) {
  DLTensor view;
  memset(&view, 0, sizeof view);
  view.data = data;
  view.device = k_cpu;
  view.ndim = ndim;
  view.dtype.code = kDLUInt;
  view.dtype.bits = 8;
  view.dtype.lanes = 1;
  view.shape = shape;
  return view;
}

static void create_from_view(void) {
  g_release_calls = 0;
  uint8_t data[16];
  int64_t shape[1] = {16};
  DLTensor view = u8_view(data, 1, shape);
  DLManagedTensorVersioned *t = wdl_managed_tensor_create_from_view(&view, 0, count_release, data);
  CHECK(t != NULL);
  CHECK_EQ_INT(t->dl_tensor.dtype.code, kDLUInt);
  CHECK_EQ_INT(t->dl_tensor.shape[0], 16);
  CHECK(t->dl_tensor.shape != shape);
  /* consumers call the deleter directly, as DLPack says */
  t->deleter(t);
  CHECK_EQ_INT(g_release_calls, 1);
  CHECK(g_release_ctx == data);
  CHECK(wdl_managed_tensor_create_from_view(NULL, 0, NULL, NULL) == NULL);
  CHECK_ERROR(WDL_NULL_POINTER, "field view");
}

static void create_borrowed(void) {
  g_release_calls = 0;
  uint8_t data[16];
  int64_t shape[2] = {4, 4};
  DLTensor view = u8_view(data, 2, shape);
  uint32_t live = wdl_managed_tensor_live_count();
  DLManagedTensorVersioned *t = wdl_managed_tensor_create_borrowed(&view);
  CHECK(t != NULL);
  CHECK_EQ_U64(t->flags, 0); /* writable, not a copy */
  CHECK(t->dl_tensor.data == data);
  CHECK(t->dl_tensor.shape != shape && t->dl_tensor.shape[1] == 4);
  CHECK(t->dl_tensor.strides != NULL && t->dl_tensor.strides[0] == 4 && t->dl_tensor.strides[1] == 1);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), live + 1);
  t->deleter(t);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), live);
  CHECK_EQ_INT(g_release_calls, 0); /* borrowed: nothing to release */
  /* the same checks as every create: a NULL view, then an invalid one (negative extent) */
  CHECK(wdl_managed_tensor_create_borrowed(NULL) == NULL);
  CHECK_ERROR(WDL_NULL_POINTER, "field view");
  shape[0] = -1;
  CHECK(wdl_managed_tensor_create_borrowed(&view) == NULL);
  CHECK_EQ_INT(wdl_last_error_code(), WDL_BAD_SHAPE);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), live);
}

static void alloc_cpu_owned_zeroed_aligned(void) {
  int64_t shape[3] = {2, 3, 5};
  DLManagedTensorVersioned *t = wdl_managed_tensor_alloc_cpu(k_f32, 3, shape);
  CHECK(t != NULL);
  CHECK(t->dl_tensor.data != NULL);
  CHECK_EQ_INT((uintptr_t)t->dl_tensor.data % WDL_CPU_ALIGNMENT, 0);
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLCPU);
  float *f = (float *)t->dl_tensor.data;
  for (int i = 0; i < 30; i++) CHECK(f[i] == 0.0f);
  for (int i = 0; i < 30; i++) f[i] = (float)i; /* writable (ASan checks the size) */
  uint64_t n = 0;
  CHECK_EQ_INT(wdl_tensor_nbytes(&t->dl_tensor, &n), 0);
  CHECK_EQ_U64(n, 120);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 1);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0); /* frees data too (LSan would see a leak) */
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 0);
}

static void alloc_cpu_p_and_errors(void) {
  int64_t shape[1] = {3};
  DLDataType i16 = {kDLInt, 16, 1};
  DLManagedTensorVersioned *t = wdl_managed_tensor_alloc_cpu_p(&i16, 1, shape);
  CHECK(t != NULL);
  CHECK_EQ_INT(t->dl_tensor.dtype.bits, 16);
  wdl_managed_tensor_release(t);
  CHECK(wdl_managed_tensor_alloc_cpu_p(NULL, 1, shape) == NULL);
  CHECK_ERROR(WDL_NULL_POINTER, "field dtype");
  DLDataType bad = {kDLFloat, 12, 1};
  CHECK(wdl_managed_tensor_alloc_cpu(bad, 1, shape) == NULL);
  CHECK_ERROR(WDL_BAD_DTYPE, "DLTensor.dtype.bits");
  int64_t overflow[2] = {INT64_C(1) << 40, INT64_C(1) << 30};
  CHECK(wdl_managed_tensor_alloc_cpu(k_f32, 2, overflow) == NULL);
  CHECK_ERROR(WDL_SIZE_OVERFLOW, "DLTensor.shape");
  int64_t huge[1] = {INT64_C(1) << 42}; /* 16 TiB: malloc fails (ASan: allocator_may_return_null=1) */
  CHECK(wdl_managed_tensor_alloc_cpu(k_f32, 1, huge) == NULL);
  CHECK_ERROR(WDL_OUT_OF_MEMORY, "17592186044416 bytes");
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 0);
}

static void alloc_cpu_empty(void) {
  int64_t shape[2] = {0, 4};
  DLManagedTensorVersioned *t = wdl_managed_tensor_alloc_cpu(k_f32, 2, shape);
  CHECK(t != NULL);
  CHECK(t->dl_tensor.data == NULL);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0);
}

static int g_foreign_deletes;
static void foreign_deleter(DLManagedTensorVersioned *self) {
  g_foreign_deletes++;
  self->deleter = NULL;
}

static void release_null_and_foreign(void) {
  CHECK_EQ_INT(wdl_managed_tensor_release(NULL), 0);
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  CHECK_EQ_INT(wdl_managed_tensor_release(&m), 0); /* no deleter: nothing to do */
  g_foreign_deletes = 0;
  m.deleter = foreign_deleter;
  CHECK_EQ_INT(wdl_managed_tensor_release(&m), 0);
  CHECK_EQ_INT(g_foreign_deletes, 1);
}

static void many_tensors_no_leak(void) {
  int64_t shape[2] = {4, 4};
  DLManagedTensorVersioned *ts[100];
  for (int i = 0; i < 100; i++) {
    ts[i] = wdl_managed_tensor_alloc_cpu(k_f32, 2, shape);
    CHECK(ts[i] != NULL);
  }
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 100);
  for (int i = 99; i >= 0; i--) wdl_managed_tensor_release(ts[i]);
  CHECK_EQ_INT(wdl_managed_tensor_live_count(), 0);
}

const wdl_test_case wdl_managed_cases[] = {
    {"managed", "create_then_release_once", create_then_release_once},
    {"managed", "create_copies_strides", create_copies_strides},
    {"managed", "create_scalar_and_empty", create_scalar_and_empty},
    {"managed", "create_invalid_does_not_release", create_invalid_does_not_release},
    {"managed", "create_bad_flags", create_bad_flags},
    {"managed", "create_from_view", create_from_view},
    {"managed", "create_borrowed", create_borrowed},
    {"managed", "alloc_cpu_owned_zeroed_aligned", alloc_cpu_owned_zeroed_aligned},
    {"managed", "alloc_cpu_p_and_errors", alloc_cpu_p_and_errors},
    {"managed", "alloc_cpu_empty", alloc_cpu_empty},
    {"managed", "release_null_and_foreign", release_null_and_foreign},
    {"managed", "many_tensors_no_leak", many_tensors_no_leak},
};
const size_t wdl_managed_count = WDL_COUNT_OF(wdl_managed_cases);
