/*
 * webdlpack/host.h — what the JS host must provide to the webdlpack C library:
 * the host table (function pointers JS fills and passes to wdl_init) and the
 * struct its gpu_query entry fills. Included by webdlpack/webdlpack.h, which
 * declares what C exports; js/src/bridge/clib/abi.ts mirrors both (a test
 * parses them).
 */
#ifndef WEBDLPACK_HOST_H_
#define WEBDLPACK_HOST_H_

#include <stdint.h>

#include "dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What the JS host reports about a GPU pointer (wdl_webgpu_query).
 * 32 bytes on every target; layout mirrored in js/src/bridge/clib/abi.ts.
 */
typedef struct wdl_gpu_buffer_info {
  uint64_t nbytes;           /**< Bytes requested when the buffer was allocated/registered. */
  uint64_t allocated_nbytes; /**< Bytes of the GPUBuffer (>= nbytes; the host may round up). */
  int32_t device_id;         /**< webdlpack device id (0 = default device, > 0 registered). */
  uint32_t usage;            /**< GPUBufferUsage bit flags of the buffer. */
  uint32_t owned;            /**< 1 if freeing the pointer destroys the buffer, else 0. */
  uint32_t reserved;         /**< Always 0; keeps the struct 8-byte aligned in size. */
} wdl_gpu_buffer_info;

/* ========================================================================
 * (1) WHAT JS MUST PROVIDE — the host table
 * ========================================================================
 * JS makes each entry with the runtime's addFunction(fn, sig); the signature
 * string is given per entry. All arguments are i32 so any runtime can build
 * them. Host functions must never throw into C: they catch, remember the
 * error, and return the failure value. C then asks `last_error` for it
 * (unless the host already called wdl_set_error during the callback).
 */

/** Version of the wdl_host_table layout; JS writes it into `abi_version`. */
#define WDL_HOST_TABLE_VERSION 1

/** Function pointers the JS host provides. 32 bytes on wasm32. */
typedef struct wdl_host_table {
  /** Must be WDL_HOST_TABLE_VERSION. */
  uint32_t abi_version;
  /** Must be sizeof(wdl_host_table) as the host sees it (32 on wasm32). */
  uint32_t struct_size;
  /**
   * Allocate a WebGPU buffer of (nbytes_hi * 2^32 + nbytes_lo) bytes on device
   * `device_id` with GPUBufferUsage `usage` (0 = the host's default usage).
   * Returns a nonzero GPU pointer, or 0 on failure. Signature "iiiii".
   */
  uint32_t (*gpu_alloc)(int32_t device_id, uint32_t nbytes_lo, uint32_t nbytes_hi, uint32_t usage);
  /** Free a GPU pointer. Returns 0, or -1 on failure. Signature "ii". */
  int32_t (*gpu_free)(uint32_t ptr);
  /** Describe a GPU pointer into *out. Returns 0, or -1 on failure. Signature "iii". */
  int32_t (*gpu_query)(uint32_t ptr, wdl_gpu_buffer_info *out);
  /**
   * Take ownership of a managed tensor. Returns a handle > 0 on success (JS
   * now owns `t` and will call its deleter once); returns <= 0 on failure,
   * in which case ownership stays with C. Signature "ii".
   */
  int32_t (*tensor_to_js)(DLManagedTensorVersioned *t);
  /**
   * Give up the managed tensor behind `handle`: returns its address in this
   * module's linear memory, now owned by the caller; NULL on failure (unknown
   * or already taken handle). Signature "ii".
   */
  DLManagedTensorVersioned *(*tensor_from_js)(int32_t handle);
  /**
   * Optional (may be NULL). Called by C right after a host entry failed
   * without calling wdl_set_error: writes the NUL-terminated UTF-8 message of
   * the host's most recent error into buf (at most `cap` bytes including the
   * NUL) and returns its wdl_error_code (nonzero). Signature "iii".
   */
  int32_t (*last_error)(char *buf, uint32_t cap);
} wdl_host_table;

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* WEBDLPACK_HOST_H_ */
