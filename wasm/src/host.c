/*
 * host.c — the JS host table: installing it, turning host failures into the
 * last error, and handing managed tensors to JS and back.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static wdl_host_table g_host;
static int g_host_ready = 0;

const wdl_host_table *wdl__host(void) { return g_host_ready ? &g_host : NULL; }

WDL_EXPORT int wdl_init(const wdl_host_table *host) {
  if (host == NULL) return wdl__fail(WDL_NULL_POINTER, "host table is NULL", "host", "a wdl_host_table address", NULL);
  if (host->abi_version != WDL_HOST_TABLE_VERSION) {
    return wdl__fail(WDL_VERSION_MISMATCH, "host table version differs", "wdl_host_table.abi_version",
                     "WDL_HOST_TABLE_VERSION (1)", "%" PRIu32, host->abi_version);
  }
  if (host->struct_size != (uint32_t)sizeof(wdl_host_table)) {
    return wdl__fail(WDL_VERSION_MISMATCH, "host table size differs", "wdl_host_table.struct_size",
                     "sizeof(wdl_host_table) of this build", "%" PRIu32 " (library: %zu)", host->struct_size,
                     sizeof(wdl_host_table));
  }
  const char *missing = host->gpu_alloc == NULL   ? "wdl_host_table.gpu_alloc"
                        : host->gpu_free == NULL  ? "wdl_host_table.gpu_free"
                        : host->gpu_query == NULL ? "wdl_host_table.gpu_query"
                                                  : NULL;
  if (missing != NULL) {
    return wdl__fail(WDL_NULL_POINTER, "required host function missing", missing, "a function-table index", "NULL");
  }
  g_host = *host;
  g_host_ready = 1;
  return 0;
}

WDL_EXPORT int wdl_is_initialized(void) { return g_host_ready; }

WDL_EXPORT void wdl_shutdown(void) {
  memset(&g_host, 0, sizeof g_host);
  g_host_ready = 0;
}

WDL_EXPORT uint32_t wdl_version(void) {
  return ((uint32_t)WEBDLPACK_VERSION_MAJOR << 16) | (uint32_t)WEBDLPACK_VERSION_MINOR;
}

int wdl__host_failed(const char *entry, uint32_t seq_before) {
  /* The host may have reported through wdl_set_error during the call. */
  if (wdl__error_seq() != seq_before && wdl_last_error_code() != WDL_OK) return -1;
  const wdl_host_table *host = wdl__host();
  if (host != NULL && host->last_error != NULL) {
    char buf[WDL_MESSAGE_CAP];
    buf[0] = '\0';
    int32_t code = host->last_error(buf, (uint32_t)sizeof buf);
    buf[sizeof buf - 1] = '\0';
    if (code > 0 && strcmp(wdl_error_name(code), "UNKNOWN") != 0) {
      wdl_set_error(code, buf);
      return -1;
    }
    return wdl__fail(WDL_GPU_ERROR, "host function failed with an unknown error code", entry,
                     "a wdl_error_code from last_error", "%" PRId32 " (%s)", code, buf);
  }
  return wdl__fail(WDL_GPU_ERROR, "host function failed and gave no error", entry, "success", NULL);
}

WDL_EXPORT int32_t wdl_tensor_to_js(DLManagedTensorVersioned *t) {
  if (wdl_managed_tensor_validate(t, wdl__default_memory_size()) != 0) return 0;
  const wdl_host_table *host = wdl__host();
  if (host == NULL || host->tensor_to_js == NULL) {
    wdl__fail(WDL_UNSUPPORTED, host == NULL ? "wdl_init has not been called" : "host has no tensor_to_js",
              "wdl_host_table.tensor_to_js", "an installed host function", NULL);
    return 0;
  }
  uint32_t seq = wdl__error_seq();
  int32_t handle = host->tensor_to_js(t);
  if (handle <= 0) {
    wdl__host_failed("wdl_host_table.tensor_to_js", seq);
    return 0;
  }
  return handle;
}

WDL_EXPORT DLManagedTensorVersioned *wdl_tensor_from_js(int32_t handle) {
  if (handle <= 0) {
    wdl__fail(WDL_INVALID_ARGUMENT, "handle must be positive", "handle", "a handle > 0 from the JS host", "%" PRId32,
              handle);
    return NULL;
  }
  const wdl_host_table *host = wdl__host();
  if (host == NULL || host->tensor_from_js == NULL) {
    wdl__fail(WDL_UNSUPPORTED, host == NULL ? "wdl_init has not been called" : "host has no tensor_from_js",
              "wdl_host_table.tensor_from_js", "an installed host function", NULL);
    return NULL;
  }
  uint32_t seq = wdl__error_seq();
  DLManagedTensorVersioned *t = host->tensor_from_js(handle);
  if (t == NULL) {
    wdl__host_failed("wdl_host_table.tensor_from_js", seq);
    return NULL;
  }
  if (wdl_managed_tensor_validate(t, wdl__default_memory_size()) != 0) {
    /* We own it now and cannot use it: the DLPack contract says call the deleter. */
    wdl_managed_tensor_release(t);
    return NULL;
  }
  return t;
}
