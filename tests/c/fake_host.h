/*
 * fake_host.h — a JS host stand-in for native tests: a GPU pointer table and
 * a tensor handle table in plain C, with switches to make each entry fail.
 */
#ifndef WDL_FAKE_HOST_H_
#define WDL_FAKE_HOST_H_

#include <stdint.h>

#include "webdlpack/webdlpack.h"

/** How a fake entry fails when asked to. */
typedef enum {
  FAKE_OK = 0,          /**< Behave normally. */
  FAKE_FAIL_LAST_ERROR, /**< Return failure; report through last_error. */
  FAKE_FAIL_SET_ERROR,  /**< Return failure after calling wdl_set_error itself. */
  FAKE_FAIL_SILENT,     /**< Return failure; last_error returns 0 (no error known). */
} fake_mode;

/** State and counters of the fake host (reset before each case). */
typedef struct {
  fake_mode alloc_mode, free_mode, query_mode, to_js_mode, from_js_mode;
  int fail_code; /**< wdl_error_code reported when failing. */
  unsigned alloc_calls, free_calls, query_calls, to_js_calls, from_js_calls, last_error_calls;
  int32_t last_device_id; /**< Arguments of the most recent gpu_alloc. */
  uint32_t last_lo, last_hi, last_usage;
} fake_host_state;

extern fake_host_state fake;

/** A host table whose entries are the fake functions (all present). */
wdl_host_table fake_host_table(void);

/** Reset state, counters and tables (frees nothing the library owns). */
void fake_host_reset(void);

/** Number of live fake GPU buffers. */
unsigned fake_live_buffers(void);

/** Publish a managed tensor as JS would (returns a handle > 0). */
int32_t fake_publish_tensor(DLManagedTensorVersioned *t);

/** Take a tensor C handed over via tensor_to_js (NULL if none under handle). */
DLManagedTensorVersioned *fake_take_tensor(int32_t handle);

/** Fail the current case if buffers or tensors were left in the fake; then release them. */
void fake_host_check_clean(void);

#endif /* WDL_FAKE_HOST_H_ */
