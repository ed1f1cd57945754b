/*
 * test_webgpu.c — wdl_init and GPU pointers through a fake host: argument
 * checks, the C-side ledger (count/bytes, double free, foreign pointers),
 * and host failures turned into the last error.
 */
#include "fake_host.h"
#include "harness.h"
#include "webdlpack/webdlpack.h"

static void init_fake(void) {
  wdl_host_table h = fake_host_table();
  if (wdl_init(&h) != 0) wdl_t_fail(__FILE__, __LINE__, "wdl_init: %s", wdl_last_error_message());
}

/* How many live buffers the C-side ledger tracks. */
static uint32_t live_count(void) {
  wdl_webgpu_stats st;
  wdl_webgpu_stats_get(&st);
  return st.live_count;
}

static void init_checks_table(void) {
  CHECK_EQ_INT(wdl_is_initialized(), 0);
  CHECK_EQ_INT(wdl_init(NULL), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field host");
  wdl_host_table h = fake_host_table();
  h.abi_version = 2;
  CHECK_EQ_INT(wdl_init(&h), -1);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "field wdl_host_table.abi_version; value 2");
  h = fake_host_table();
  h.struct_size = 28;
  CHECK_EQ_INT(wdl_init(&h), -1);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "wdl_host_table.struct_size");
  h = fake_host_table();
  h.gpu_free = NULL;
  CHECK_EQ_INT(wdl_init(&h), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "wdl_host_table.gpu_free");
  CHECK_EQ_INT(wdl_is_initialized(), 0);
  h = fake_host_table();
  h.tensor_to_js = NULL; /* optional */
  h.tensor_from_js = NULL;
  h.last_error = NULL;
  CHECK_EQ_INT(wdl_init(&h), 0);
  CHECK_EQ_INT(wdl_is_initialized(), 1);
  wdl_shutdown();
  CHECK_EQ_INT(wdl_is_initialized(), 0);
}

static void not_initialized(void) {
  CHECK_EQ_INT(wdl_webgpu_alloc(0, 16, 0), 0);
  CHECK_ERROR(WDL_UNSUPPORTED, "wdl_init has not been called");
  wdl_gpu_buffer_info info;
  CHECK_EQ_INT(wdl_webgpu_query(0x80000100u, &info), -1);
  CHECK_ERROR(WDL_UNSUPPORTED, "wdl_init");
  CHECK_EQ_INT(fake.alloc_calls + fake.query_calls, 0);
}

static void alloc_free_ledger(void) {
  init_fake();
  uint32_t a = wdl_webgpu_alloc(0, 100, 0);
  uint32_t b = wdl_webgpu_alloc(1, 4096, 0x80 /* STORAGE */);
  uint32_t c = wdl_webgpu_alloc(0, 1, 0);
  CHECK(a != 0 && b != 0 && c != 0);
  CHECK(a != b && b != c && a != c);
  CHECK(a >= 0x80000000u); /* pointers above 2^31 stay unsigned */
  CHECK_EQ_INT(fake.last_device_id, 0);
  wdl_webgpu_stats st;
  CHECK_EQ_INT(wdl_webgpu_stats_get(&st), 0);
  CHECK_EQ_INT(st.live_count, 3);
  CHECK_EQ_U64(st.live_bytes, 4197);
  CHECK_EQ_INT(fake_live_buffers(), 3);
  CHECK_EQ_INT(wdl_webgpu_free(b), 0);
  CHECK_EQ_INT(wdl_webgpu_stats_get(&st), 0);
  CHECK_EQ_INT(st.live_count, 2);
  CHECK_EQ_U64(st.live_bytes, 101);
  CHECK_EQ_INT(wdl_webgpu_free(a), 0);
  CHECK_EQ_INT(wdl_webgpu_free(c), 0);
  CHECK_EQ_INT(wdl_webgpu_stats_get(&st), 0);
  CHECK_EQ_INT(st.live_count, 0);
  CHECK_EQ_U64(st.live_bytes, 0);
  CHECK_EQ_INT(fake_live_buffers(), 0);
  CHECK_EQ_INT(fake.free_calls, 3);
  CHECK_EQ_INT(wdl_webgpu_stats_get(NULL), -1);
}

static void large_size_split_lo_hi(void) {
  init_fake();
  uint64_t n = (UINT64_C(5) << 30) + 12; /* 5 GiB + 12: needs the high word */
  uint32_t p = wdl_webgpu_alloc(0, n, 0);
  CHECK(p != 0);
  CHECK_EQ_U64(fake.last_lo, (uint32_t)n);
  CHECK_EQ_U64(fake.last_hi, 1);
  wdl_gpu_buffer_info info;
  CHECK_EQ_INT(wdl_webgpu_query(p, &info), 0);
  CHECK_EQ_U64(info.nbytes, n);
  CHECK_EQ_INT(wdl_webgpu_free(p), 0);
}

static void double_free_caught_in_c(void) {
  init_fake();
  uint32_t p = wdl_webgpu_alloc(0, 64, 0);
  CHECK(p != 0);
  CHECK_EQ_INT(wdl_webgpu_free(p), 0);
  unsigned calls = fake.free_calls;
  CHECK_EQ_INT(wdl_webgpu_free(p), -1);
  CHECK_ERROR(WDL_DOUBLE_FREE, "already freed");
  CHECK_EQ_INT(fake.free_calls, calls); /* JS was not asked */
}

static void foreign_pointer_refused(void) {
  init_fake();
  CHECK_EQ_INT(wdl_webgpu_free(12345), -1);
  CHECK_ERROR(WDL_INVALID_POINTER, "value 0x00003039");
  CHECK_EQ_INT(wdl_webgpu_free(0), -1);
  CHECK_ERROR(WDL_INVALID_POINTER, "GPU pointer is 0");
  CHECK_EQ_INT(fake.free_calls, 0);
}

static void alloc_argument_errors(void) {
  init_fake();
  CHECK_EQ_INT(wdl_webgpu_alloc(0, 0, 0), 0);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "field nbytes; value 0");
  CHECK_EQ_INT(wdl_webgpu_alloc(0, (UINT64_C(1) << 53) + 1, 0), 0);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "0 < nbytes <= 2^53");
  CHECK_EQ_INT(wdl_webgpu_alloc(-2, 16, 0), 0);
  CHECK_ERROR(WDL_UNKNOWN_DEVICE, "field device_id; value -2");
  CHECK_EQ_INT(fake.alloc_calls, 0);
}

static void host_error_via_last_error(void) {
  init_fake();
  fake.alloc_mode = FAKE_FAIL_LAST_ERROR;
  fake.fail_code = WDL_OUT_OF_MEMORY;
  CHECK_EQ_INT(wdl_webgpu_alloc(0, 1 << 20, 0), 0);
  CHECK_ERROR(WDL_OUT_OF_MEMORY, "fake host: gpu_alloc failed");
  CHECK_EQ_INT(fake.last_error_calls, 1);
  CHECK_EQ_INT(live_count(), 0);
}

static void host_error_via_set_error(void) {
  init_fake();
  fake.alloc_mode = FAKE_FAIL_SET_ERROR;
  fake.fail_code = WDL_UNKNOWN_DEVICE;
  CHECK_EQ_INT(wdl_webgpu_alloc(3, 16, 0), 0);
  CHECK_ERROR(WDL_UNKNOWN_DEVICE, "fake host: gpu_alloc failed");
  CHECK_EQ_INT(fake.last_error_calls, 0); /* already reported */
}

static void host_error_silent(void) {
  init_fake();
  fake.query_mode = FAKE_FAIL_SILENT;
  wdl_gpu_buffer_info info;
  CHECK_EQ_INT(wdl_webgpu_query(0x80000100u, &info), -1);
  CHECK_ERROR(WDL_GPU_ERROR, "wdl_host_table.gpu_query");
  /* no last_error entry at all */
  wdl_host_table h = fake_host_table();
  h.last_error = NULL;
  CHECK_EQ_INT(wdl_init(&h), 0);
  CHECK_EQ_INT(wdl_webgpu_query(0x80000100u, &info), -1);
  CHECK_ERROR(WDL_GPU_ERROR, "host function failed and gave no error");
}

/* Allocate 256 bytes into *p, then free it while the fake host's gpu_free
   fails with `code`; checks that the free reports `code`. Callers stop when
   wdl_t_has_failed(). */
static void free_failing_with(int code, uint32_t *p) {
  init_fake();
  *p = wdl_webgpu_alloc(0, 256, 0);
  CHECK(*p != 0);
  fake.free_mode = FAKE_FAIL_LAST_ERROR;
  fake.fail_code = code;
  CHECK_EQ_INT(wdl_webgpu_free(*p), -1);
  CHECK_ERROR(code, "gpu_free failed");
}

static void free_device_lost_forgets(void) {
  uint32_t p = 0;
  free_failing_with(WDL_DEVICE_LOST, &p);
  if (wdl_t_has_failed()) return;
  CHECK_EQ_INT(live_count(), 0); /* the buffer died with its device */
  fake_host_reset();             /* drop the fake's record of it */
}

static void free_of_pointer_js_already_freed_forgets(void) {
  const int32_t gone[] = {WDL_STALE_POINTER, WDL_DOUBLE_FREE, WDL_INVALID_POINTER};
  for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
    uint32_t p = 0;
    free_failing_with(gone[i], &p);
    if (wdl_t_has_failed()) return;
    CHECK_EQ_INT(live_count(), 0); /* JS no longer has it: C forgets it instead of failing forever */
    CHECK_EQ_INT(wdl_webgpu_free(p), -1);
    CHECK_ERROR(WDL_DOUBLE_FREE, "already freed");
    fake_host_reset();
  }
}

static void free_other_failure_keeps(void) {
  uint32_t p = 0;
  free_failing_with(WDL_GPU_ERROR, &p);
  if (wdl_t_has_failed()) return;
  CHECK_EQ_INT(live_count(), 1);
  fake.free_mode = FAKE_OK;
  CHECK_EQ_INT(wdl_webgpu_free(p), 0); /* retry works */
}

static void query_fields(void) {
  init_fake();
  uint32_t p = wdl_webgpu_alloc(2, 100, 0x88);
  CHECK(p != 0);
  wdl_gpu_buffer_info info;
  memset(&info, 0xff, sizeof info);
  CHECK_EQ_INT(wdl_webgpu_query(p, &info), 0);
  CHECK_EQ_U64(info.nbytes, 100);
  CHECK_EQ_U64(info.allocated_nbytes, 112);
  CHECK_EQ_INT(info.device_id, 2);
  CHECK_EQ_INT(info.usage, 0x88);
  CHECK_EQ_INT(info.owned, 1);
  CHECK_EQ_INT(info.reserved, 0);
  CHECK_EQ_INT(wdl_webgpu_query(p, NULL), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field out");
  CHECK_EQ_INT(wdl_webgpu_query(0, &info), -1);
  CHECK_ERROR(WDL_INVALID_POINTER, "field ptr");
  CHECK_EQ_INT(wdl_webgpu_free(p), 0);
  CHECK_EQ_INT(wdl_webgpu_query(p, &info), -1);
  CHECK_ERROR(WDL_INVALID_POINTER, "unknown pointer");
}

static void ledger_grows(void) {
  init_fake();
  uint32_t ptrs[40];
  for (int i = 0; i < 40; i++) {
    ptrs[i] = wdl_webgpu_alloc(0, (uint64_t)(i + 1), 0);
    CHECK(ptrs[i] != 0);
  }
  wdl_webgpu_stats st;
  wdl_webgpu_stats_get(&st);
  CHECK_EQ_INT(st.live_count, 40);
  CHECK_EQ_U64(st.live_bytes, 40 * 41 / 2);
  for (int i = 0; i < 40; i += 2) CHECK_EQ_INT(wdl_webgpu_free(ptrs[i]), 0);
  for (int i = 1; i < 40; i += 2) CHECK_EQ_INT(wdl_webgpu_free(ptrs[i]), 0);
  wdl_webgpu_stats_get(&st);
  CHECK_EQ_INT(st.live_count, 0);
}

static void tensor_query_resolves_and_bounds(void) {
  init_fake();
  uint32_t p = wdl_webgpu_alloc(1, 100, 0); /* the fake host gives a 112-byte buffer */
  CHECK(p != 0);
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  DLTensor t = {(void *)(uintptr_t)p, {kDLWebGPU, 1}, 2, {kDLFloat, 32, 1}, shape, NULL, 92};
  wdl_gpu_buffer_info info;
  memset(&info, 0xff, sizeof info);
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1); /* 92 + 24 bytes > 112 */
  CHECK_ERROR(WDL_OUT_OF_BOUNDS, "bytes [92, 116) of a 112-byte buffer");
  t.byte_offset = 16;
  t.strides = strides;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), 0);
  CHECK_EQ_U64(info.nbytes, 100);
  CHECK_EQ_U64(info.allocated_nbytes, 112);
  CHECK_EQ_INT(info.device_id, 1);
  int64_t back[2] = {-3, -1}; /* negative strides reach below data + byte_offset */
  t.strides = back;
  t.byte_offset = 16;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_OUT_OF_BOUNDS, "bytes [-4, 20) of a 112-byte buffer");
  t.byte_offset = 20;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), 0);
  t.byte_offset = (uint64_t)INT64_MAX - 2; /* past 2^53 - 1: spec/validation-rules.json, gpu_byte_offset_past_2_53 */
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_SIZE_OVERFLOW, "field DLTensor.byte_offset; value 9223372036854775805");
  t.byte_offset = UINT64_MAX;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_SIZE_OVERFLOW, "field DLTensor.byte_offset; value 18446744073709551615");
  t.byte_offset = (UINT64_C(1) << 53) - 1 - 20; /* the largest allowed offset: outside the buffer, reported exactly */
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_OUT_OF_BOUNDS, "bytes [9007199254740951, 9007199254740975) of a 112-byte buffer");
  t.byte_offset = 20;
  t.device.device_id = 0;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_INVALID_POINTER, "field DLTensor.device.device_id; value 0 (pointer");
  t.device = (DLDevice){kDLCPU, 0};
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_BAD_DEVICE, "field DLTensor.device.device_type; value 1");
  t.device = (DLDevice){kDLWebGPU, 1};
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, NULL), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field out");
  t.ndim = -1;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_BAD_NDIM, "ndim");
  t.ndim = 2;
  t.data = NULL;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field DLTensor.data");
  t.data = (void *)(uintptr_t)p;
  CHECK_EQ_INT(wdl_webgpu_free(p), 0);
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t, &info), -1); /* the host's error for a freed pointer */
  CHECK_ERROR(WDL_INVALID_POINTER, "unknown pointer");
}

const wdl_test_case wdl_webgpu_cases[] = {
    {"webgpu", "init_checks_table", init_checks_table},
    {"webgpu", "not_initialized", not_initialized},
    {"webgpu", "alloc_free_ledger", alloc_free_ledger},
    {"webgpu", "large_size_split_lo_hi", large_size_split_lo_hi},
    {"webgpu", "double_free_caught_in_c", double_free_caught_in_c},
    {"webgpu", "foreign_pointer_refused", foreign_pointer_refused},
    {"webgpu", "alloc_argument_errors", alloc_argument_errors},
    {"webgpu", "host_error_via_last_error", host_error_via_last_error},
    {"webgpu", "host_error_via_set_error", host_error_via_set_error},
    {"webgpu", "host_error_silent", host_error_silent},
    {"webgpu", "free_device_lost_forgets", free_device_lost_forgets},
    {"webgpu", "free_other_failure_keeps", free_other_failure_keeps},
    {"webgpu", "free_of_pointer_js_already_freed_forgets", free_of_pointer_js_already_freed_forgets},
    {"webgpu", "query_fields", query_fields},
    {"webgpu", "ledger_grows", ledger_grows},
    {"webgpu", "tensor_query_resolves_and_bounds", tensor_query_resolves_and_bounds},
};
const size_t wdl_webgpu_count = WDL_COUNT_OF(wdl_webgpu_cases);
