/*
 * test_example.c — runs examples/c_webgpu_tensor.c (the README's C example)
 * against the fake host: the tensor reaches the JS side with the right fields
 * and, when JS releases it, its GPU buffer is freed exactly once; on every
 * failure the example gives back 0, names the error and leaks nothing.
 */
#include "fake_host.h"
#include "harness.h"
#include "webdlpack/webdlpack.h"

/* The example's entry point (examples/c_webgpu_tensor.c, linked into the test binary). */
int32_t example_gpu_tensor(void);

static void init_fake(void) {
  wdl_host_table h = fake_host_table();
  if (wdl_init(&h) != 0) wdl_t_fail(__FILE__, __LINE__, "wdl_init: %s", wdl_last_error_message());
}

static void hands_tensor_to_js_released_once(void) {
  init_fake();
  int32_t handle = example_gpu_tensor();
  CHECK(handle > 0);
  CHECK_EQ_INT(fake.alloc_calls, 1);
  CHECK_EQ_U64(fake.last_lo, 4096);
  CHECK_EQ_INT(fake.to_js_calls, 1);
  CHECK_EQ_INT(fake_live_buffers(), 1);
  DLManagedTensorVersioned *t = fake_take_tensor(handle); /* what JS holds now */
  CHECK(t != NULL);
  CHECK_EQ_INT(t->version.major, 1);
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLWebGPU);
  CHECK_EQ_INT(t->dl_tensor.device.device_id, 0);
  CHECK_EQ_INT(t->dl_tensor.ndim, 1);
  CHECK_EQ_INT(t->dl_tensor.shape[0], 1024);
  CHECK(t->dl_tensor.strides != NULL && t->dl_tensor.strides[0] == 1); /* never NULL (DLPack 1.2) */
  CHECK_EQ_INT(t->dl_tensor.dtype.code, kDLFloat);
  CHECK_EQ_INT(t->dl_tensor.dtype.bits, 32);
  CHECK_EQ_INT(t->dl_tensor.dtype.lanes, 1);
  wdl_gpu_buffer_info info;
  CHECK_EQ_INT(wdl_webgpu_tensor_query(&t->dl_tensor, &info), 0); /* data names the live buffer */
  CHECK_EQ_U64(info.nbytes, 4096);
  CHECK_EQ_INT(fake.free_calls, 0);
  CHECK_EQ_INT(wdl_managed_tensor_release(t), 0); /* JS's dispose(): the deleter runs */
  CHECK_EQ_INT(fake.free_calls, 1);
  CHECK_EQ_INT(fake_live_buffers(), 0);
  wdl_webgpu_stats st;
  CHECK_EQ_INT(wdl_webgpu_stats_get(&st), 0);
  CHECK_EQ_INT(st.live_count, 0);
}

/* Run the example with the host failing as set up; it must return 0 with the host's error and free what it made. */
static void check_failure(int code, const char *needle, unsigned to_js_calls, unsigned free_calls) {
  CHECK_EQ_INT(example_gpu_tensor(), 0);
  CHECK_ERROR(code, needle);
  CHECK_EQ_INT(fake.to_js_calls, to_js_calls);
  CHECK_EQ_INT(fake.free_calls, free_calls);
  CHECK_EQ_INT(fake_live_buffers(), 0);
}

static void alloc_failure_returns_0(void) {
  init_fake();
  fake.alloc_mode = FAKE_FAIL_LAST_ERROR;
  fake.fail_code = WDL_OUT_OF_MEMORY;
  check_failure(WDL_OUT_OF_MEMORY, "gpu_alloc failed", 0, 0);
}

static void js_refusal_frees_the_buffer(void) {
  init_fake();
  fake.to_js_mode = FAKE_FAIL_LAST_ERROR;
  fake.fail_code = WDL_DISPOSED;
  /* the example released its tensor: the deleter freed the buffer, once */
  check_failure(WDL_DISPOSED, "tensor_to_js failed", 1, 1);
}

static void without_host_returns_0(void) {
  CHECK_EQ_INT(example_gpu_tensor(), 0);
  CHECK_ERROR(WDL_UNSUPPORTED, "wdl_init");
  CHECK_EQ_INT(fake.alloc_calls, 0);
}

const wdl_test_case wdl_example_cases[] = {
    {"example", "hands_tensor_to_js_released_once", hands_tensor_to_js_released_once},
    {"example", "alloc_failure_returns_0", alloc_failure_returns_0},
    {"example", "js_refusal_frees_the_buffer", js_refusal_frees_the_buffer},
    {"example", "without_host_returns_0", without_host_returns_0},
};
const size_t wdl_example_count = WDL_COUNT_OF(wdl_example_cases);
