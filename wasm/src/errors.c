/*
 * errors.c — the last-error record and error names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int g_code = WDL_OK;
static char g_message[WDL_MESSAGE_CAP];
static uint32_t g_seq = 0; /* bumped on every error set */

uint32_t wdl__error_seq(void) { return g_seq; }

static const char *const k_names[] = {
    "OK",
    "INVALID_ARGUMENT",
    "OUT_OF_BOUNDS",
    "NULL_POINTER",
    "BAD_NDIM",
    "BAD_SHAPE",
    "BAD_STRIDES",
    "SIZE_OVERFLOW",
    "BAD_DTYPE",
    "BAD_DEVICE",
    "VERSION_MISMATCH",
    "BAD_FLAGS",
    "NO_WEBGPU",
    "NO_ADAPTER",
    "UNKNOWN_DEVICE",
    "DEVICE_LOST",
    "INVALID_POINTER",
    "STALE_POINTER",
    "DOUBLE_FREE",
    "OUT_OF_MEMORY",
    "ALREADY_CONSUMED",
    "DISPOSED",
    "INCOMPATIBLE_CONTEXT",
    "COPY_REQUIRED",
    "UNSUPPORTED",
    "GPU_ERROR",
};

#define K_NAME_COUNT ((int)(sizeof(k_names) / sizeof(k_names[0])))

WDL_EXPORT const char *wdl_error_name(int code) {
  if (code < 0 || code >= K_NAME_COUNT) return "UNKNOWN";
  return k_names[code];
}

WDL_EXPORT int wdl_last_error_code(void) { return g_code; }

WDL_EXPORT const char *wdl_last_error_message(void) { return g_message; }

WDL_EXPORT void wdl_clear_error(void) {
  g_code = WDL_OK;
  g_message[0] = '\0';
}

WDL_EXPORT int wdl_set_error(int code, const char *msg) {
  if (code < 0 || code >= K_NAME_COUNT) {
    return wdl__fail(WDL_INVALID_ARGUMENT, "wdl_set_error: unknown error code", "code", "a wdl_error_code (0..25)",
                     "%d", code);
  }
  g_code = code;
  g_seq++;
  if (msg == NULL) {
    g_message[0] = '\0';
  } else {
    /* Copy without assuming msg is shorter than the buffer. */
    size_t n = 0;
    while (n < WDL_MESSAGE_CAP - 1 && msg[n] != '\0') n++;
    memmove(g_message, msg, n); /* msg may point into g_message itself (re-raising a message) */
    g_message[n] = '\0';
  }
  return 0;
}

int wdl__fail(wdl_error_code code, const char *what, const char *field, const char *expected, const char *value_fmt,
              ...) {
  size_t cap = sizeof(g_message);
  int n = snprintf(g_message, cap, "[%s] %s", wdl_error_name((int)code), what ? what : "failed");
  size_t used = n < 0 ? 0 : ((size_t)n >= cap ? cap - 1 : (size_t)n);
  if (field != NULL && used < cap - 1) {
    n = snprintf(g_message + used, cap - used, "; field %s", field);
    used = n < 0 ? used : (used + (size_t)n >= cap ? cap - 1 : used + (size_t)n);
  }
  if (value_fmt != NULL && used < cap - 1) {
    n = snprintf(g_message + used, cap - used, "; value ");
    used = n < 0 ? used : (used + (size_t)n >= cap ? cap - 1 : used + (size_t)n);
    if (used < cap - 1) {
      va_list ap;
      va_start(ap, value_fmt);
      n = vsnprintf(g_message + used, cap - used, value_fmt, ap);
      va_end(ap);
      used = n < 0 ? used : (used + (size_t)n >= cap ? cap - 1 : used + (size_t)n);
    }
  }
  if (expected != NULL && used < cap - 1) {
    snprintf(g_message + used, cap - used, "; expected %s", expected);
  }
  g_code = (int)code;
  g_seq++;
  return -1;
}
