/*
 * test_host.c — managed tensors handed to JS and back through the fake
 * host: ownership on success and on every failure path.
 */
#include "fake_host.h"
#include "harness.h"
#include "webdlpack/webdlpack.h"

static int g_releases;
static void count_release(void *ctx) {
  (void)ctx;
  g_releases++;
}

static DLManagedTensorVersioned *make(void) {
  static float data[6];
  static const int64_t shape[2] = {2, 3};
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  return wdl_managed_tensor_create(cpu, f32, 2, shape, NULL, data, 0, 0, count_release, NULL);
}

static void init_fake(void) {
  wdl_host_table h = fake_host_table();
  if (wdl_init(&h) != 0) wdl_t_fail(__FILE__, __LINE__, "wdl_init: %s", wdl_last_error_message());
}

static void round_trip(void) {
  init_fake();
  g_releases = 0;
  DLManagedTensorVersioned *t = make();
  CHECK(t != NULL);
  int32_t h = wdl_tensor_to_js(t);
  CHECK(h > 0);
  CHECK_EQ_INT(fake.to_js_calls, 1);
  CHECK_EQ_INT(g_releases, 0);
  DLManagedTensorVersioned *back = wdl_tensor_from_js(h);
  CHECK(back == t);
  CHECK_EQ_INT(back->dl_tensor.shape[1], 3);
  CHECK_EQ_INT(wdl_managed_tensor_release(back), 0);
  CHECK_EQ_INT(g_releases, 1);
}

static void from_js_twice_fails(void) {
  init_fake();
  DLManagedTensorVersioned *t = make();
  int32_t h = wdl_tensor_to_js(t);
  CHECK(h > 0);
  DLManagedTensorVersioned *back = wdl_tensor_from_js(h);
  CHECK(back != NULL);
  CHECK(wdl_tensor_from_js(h) == NULL);
  CHECK_ERROR(WDL_ALREADY_CONSUMED, "no tensor under this handle");
  wdl_managed_tensor_release(back);
}

static void to_js_invalid_keeps_ownership(void) {
  init_fake();
  g_releases = 0;
  DLManagedTensorVersioned *t = make();
  CHECK(t != NULL);
  t->version.major = 9;
  CHECK_EQ_INT(wdl_tensor_to_js(t), 0);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "version.major");
  CHECK_EQ_INT(fake.to_js_calls, 0);
  CHECK_EQ_INT(g_releases, 0);
  t->version.major = 1;
  CHECK_EQ_INT(wdl_tensor_to_js(NULL), 0);
  CHECK_ERROR(WDL_NULL_POINTER, "DLManagedTensorVersioned");
  wdl_managed_tensor_release(t);
  CHECK_EQ_INT(g_releases, 1);
}

static void to_js_host_refuses(void) {
  init_fake();
  g_releases = 0;
  fake.to_js_mode = FAKE_FAIL_LAST_ERROR;
  fake.fail_code = WDL_DISPOSED;
  DLManagedTensorVersioned *t = make();
  CHECK_EQ_INT(wdl_tensor_to_js(t), 0);
  CHECK_ERROR(WDL_DISPOSED, "tensor_to_js failed");
  CHECK_EQ_INT(g_releases, 0); /* still ours */
  wdl_managed_tensor_release(t);
  CHECK_EQ_INT(g_releases, 1);
}

static void from_js_bad_version_is_deleted(void) {
  init_fake();
  g_releases = 0;
  DLManagedTensorVersioned *t = make();
  t->version.major = 2; /* as if JS published a newer ABI */
  int32_t h = fake_publish_tensor(t);
  CHECK(h > 0);
  CHECK(wdl_tensor_from_js(h) == NULL);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "value 2.1");
  CHECK_EQ_INT(g_releases, 1); /* the consumer called the deleter, as DLPack asks */
}

static void from_js_invalid_tensor_is_deleted(void) {
  init_fake();
  g_releases = 0;
  DLManagedTensorVersioned *t = make();
  t->dl_tensor.dtype.code = 99;
  int32_t h = fake_publish_tensor(t);
  CHECK(wdl_tensor_from_js(h) == NULL);
  CHECK_ERROR(WDL_BAD_DTYPE, "dtype.code; value 99");
  CHECK_EQ_INT(g_releases, 1);
}

static void from_js_bad_handle(void) {
  init_fake();
  CHECK(wdl_tensor_from_js(0) == NULL);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "field handle; value 0");
  CHECK(wdl_tensor_from_js(-5) == NULL);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "value -5");
  CHECK_EQ_INT(fake.from_js_calls, 0);
}

static void missing_entries_unsupported(void) {
  wdl_host_table h = fake_host_table();
  h.tensor_to_js = NULL;
  h.tensor_from_js = NULL;
  CHECK_EQ_INT(wdl_init(&h), 0);
  DLManagedTensorVersioned *t = make();
  CHECK_EQ_INT(wdl_tensor_to_js(t), 0);
  CHECK_ERROR(WDL_UNSUPPORTED, "host has no tensor_to_js");
  CHECK(wdl_tensor_from_js(1) == NULL);
  CHECK_ERROR(WDL_UNSUPPORTED, "host has no tensor_from_js");
  wdl_shutdown();
  CHECK_EQ_INT(wdl_tensor_to_js(t), 0);
  CHECK_ERROR(WDL_UNSUPPORTED, "wdl_init has not been called");
  wdl_managed_tensor_release(t);
}

const wdl_test_case wdl_host_cases[] = {
    {"host", "round_trip", round_trip},
    {"host", "from_js_twice_fails", from_js_twice_fails},
    {"host", "to_js_invalid_keeps_ownership", to_js_invalid_keeps_ownership},
    {"host", "to_js_host_refuses", to_js_host_refuses},
    {"host", "from_js_bad_version_is_deleted", from_js_bad_version_is_deleted},
    {"host", "from_js_invalid_tensor_is_deleted", from_js_invalid_tensor_is_deleted},
    {"host", "from_js_bad_handle", from_js_bad_handle},
    {"host", "missing_entries_unsupported", missing_entries_unsupported},
};
const size_t wdl_host_count = WDL_COUNT_OF(wdl_host_cases);
