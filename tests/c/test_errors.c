/*
 * test_errors.c — the last-error record: codes, names, message format,
 * truncation, and that success leaves the last error alone.
 */
#include <stdlib.h>

#include "harness.h"
#include "webdlpack/webdlpack.h"

static void starts_clear(void) {
  CHECK_EQ_INT(wdl_last_error_code(), WDL_OK);
  CHECK(wdl_last_error_message() != NULL);
  CHECK_EQ_INT(strlen(wdl_last_error_message()), 0);
}

static void set_and_clear(void) {
  CHECK_EQ_INT(wdl_set_error(WDL_STALE_POINTER, "pointer 0x10 is stale"), 0);
  CHECK_ERROR(WDL_STALE_POINTER, "pointer 0x10 is stale");
  wdl_clear_error();
  CHECK_EQ_INT(wdl_last_error_code(), WDL_OK);
  CHECK_EQ_INT(strlen(wdl_last_error_message()), 0);
}

static void reraise_own_message(void) {
  /* A message that points into the library's own buffer (re-raising part of the last message) is copied safely. */
  CHECK_EQ_INT(wdl_set_error(WDL_GPU_ERROR, "host said: buffer too small"), 0);
  CHECK_EQ_INT(wdl_set_error(WDL_OUT_OF_BOUNDS, wdl_last_error_message() + 11), 0);
  CHECK_EQ_INT(wdl_last_error_code(), WDL_OUT_OF_BOUNDS);
  CHECK(strcmp(wdl_last_error_message(), "buffer too small") == 0);
  CHECK_EQ_INT(wdl_set_error(WDL_GPU_ERROR, wdl_last_error_message()), 0); /* the very same buffer */
  CHECK(strcmp(wdl_last_error_message(), "buffer too small") == 0);
  wdl_clear_error();
}

static void set_null_message(void) {
  CHECK_EQ_INT(wdl_set_error(WDL_GPU_ERROR, NULL), 0);
  CHECK_EQ_INT(wdl_last_error_code(), WDL_GPU_ERROR);
  CHECK_EQ_INT(strlen(wdl_last_error_message()), 0);
}

static void set_unknown_code_refused(void) {
  CHECK_EQ_INT(wdl_set_error(99, "x"), -1);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "field code; value 99");
  CHECK_EQ_INT(wdl_set_error(-1, "x"), -1);
  CHECK_ERROR(WDL_INVALID_ARGUMENT, "value -1");
}

static void long_message_truncated(void) {
  char *big = malloc(5000);
  CHECK(big != NULL);
  memset(big, 'a', 4999);
  big[4999] = '\0';
  int rc = wdl_set_error(WDL_GPU_ERROR, big);
  free(big);
  CHECK_EQ_INT(rc, 0);
  CHECK_EQ_INT(strlen(wdl_last_error_message()), 1023);
}

static void names_match_codes(void) {
  static const struct {
    int code;
    const char *name;
  } k[] = {
      {WDL_OK, "OK"},
      {WDL_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {WDL_OUT_OF_BOUNDS, "OUT_OF_BOUNDS"},
      {WDL_NULL_POINTER, "NULL_POINTER"},
      {WDL_BAD_NDIM, "BAD_NDIM"},
      {WDL_BAD_SHAPE, "BAD_SHAPE"},
      {WDL_BAD_STRIDES, "BAD_STRIDES"},
      {WDL_SIZE_OVERFLOW, "SIZE_OVERFLOW"},
      {WDL_BAD_DTYPE, "BAD_DTYPE"},
      {WDL_BAD_DEVICE, "BAD_DEVICE"},
      {WDL_VERSION_MISMATCH, "VERSION_MISMATCH"},
      {WDL_BAD_FLAGS, "BAD_FLAGS"},
      {WDL_NO_WEBGPU, "NO_WEBGPU"},
      {WDL_NO_ADAPTER, "NO_ADAPTER"},
      {WDL_UNKNOWN_DEVICE, "UNKNOWN_DEVICE"},
      {WDL_DEVICE_LOST, "DEVICE_LOST"},
      {WDL_INVALID_POINTER, "INVALID_POINTER"},
      {WDL_STALE_POINTER, "STALE_POINTER"},
      {WDL_DOUBLE_FREE, "DOUBLE_FREE"},
      {WDL_OUT_OF_MEMORY, "OUT_OF_MEMORY"},
      {WDL_ALREADY_CONSUMED, "ALREADY_CONSUMED"},
      {WDL_DISPOSED, "DISPOSED"},
      {WDL_INCOMPATIBLE_CONTEXT, "INCOMPATIBLE_CONTEXT"},
      {WDL_COPY_REQUIRED, "COPY_REQUIRED"},
      {WDL_UNSUPPORTED, "UNSUPPORTED"},
      {WDL_GPU_ERROR, "GPU_ERROR"},
  };
  for (size_t i = 0; i < WDL_COUNT_OF(k); i++) {
    CHECK_EQ_INT(k[i].code, (int)i); /* the enum is dense 0..25 */
    CHECK_CONTAINS(wdl_error_name(k[i].code), k[i].name);
    CHECK_EQ_INT(strlen(wdl_error_name(k[i].code)), strlen(k[i].name));
  }
  CHECK_CONTAINS(wdl_error_name(26), "UNKNOWN");
  CHECK_CONTAINS(wdl_error_name(-3), "UNKNOWN");
}

static void message_names_field_value_expected(void) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.ndim = 40;
  t.device.device_type = kDLCPU;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  CHECK_EQ_INT(wdl_tensor_validate(&t, 0), -1);
  CHECK_CONTAINS(wdl_last_error_message(), "[BAD_NDIM] ");
  CHECK_CONTAINS(wdl_last_error_message(), "; field DLTensor.ndim");
  CHECK_CONTAINS(wdl_last_error_message(), "; value 40");
  CHECK_CONTAINS(wdl_last_error_message(), "; expected 0 <= ndim <= 32");
}

static void success_keeps_previous_error(void) {
  wdl_set_error(WDL_DISPOSED, "earlier failure");
  int64_t shape[1] = {4};
  float data[4];
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  CHECK_EQ_INT(wdl_tensor_validate(&t, 0), 0);
  CHECK_ERROR(WDL_DISPOSED, "earlier failure");
}

static void version_reported(void) {
  CHECK_EQ_INT(wdl_version(), (WEBDLPACK_VERSION_MAJOR << 16) | WEBDLPACK_VERSION_MINOR);
}

const wdl_test_case wdl_errors_cases[] = {
    {"errors", "starts_clear", starts_clear},
    {"errors", "set_and_clear", set_and_clear},
    {"errors", "set_null_message", set_null_message},
    {"errors", "reraise_own_message", reraise_own_message},
    {"errors", "set_unknown_code_refused", set_unknown_code_refused},
    {"errors", "long_message_truncated", long_message_truncated},
    {"errors", "names_match_codes", names_match_codes},
    {"errors", "message_names_field_value_expected", message_names_field_value_expected},
    {"errors", "success_keeps_previous_error", success_keeps_previous_error},
    {"errors", "version_reported", version_reported},
};
const size_t wdl_errors_count = WDL_COUNT_OF(wdl_errors_cases);
