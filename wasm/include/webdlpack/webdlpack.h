/*
 * webdlpack/webdlpack.h — the webdlpack C library for frameworks compiled to wasm.
 *
 * What it gives a C/C++ framework running next to webdlpack's JS context:
 *   - WebGPU buffers named by a 32-bit "GPU pointer" (a JS pointer-table entry),
 *     allocated, freed and queried from C through the JS host;
 *   - the same DLTensor validation the JS codec applies;
 *   - DLManagedTensorVersioned objects made in one allocation, with a deleter
 *     that runs the caller's release callback exactly once;
 *   - hand-off of managed tensors to JS and back by integer handle.
 *
 * Two blocks that must not be confused:
 *   (1) "What JS must provide" (webdlpack/host.h, included below): the host
 *       table, a struct of function pointers the JS side fills (Pyodide's
 *       `addFunction`) and passes to wdl_init(). C never calls JavaScript any
 *       other way (EM_JS is refused in side modules).
 *   (2) "What C exports": every WDL_EXPORT function in this file.
 * js/src/bridge/clib/abi.ts mirrors both blocks for TypeScript.
 *
 * Error convention (every exported function):
 *   - int-returning functions return 0 on success and -1 on failure;
 *   - pointer/handle-returning functions return NULL/0 on failure;
 *   - on failure the last error (wdl_last_error_code / wdl_last_error_message)
 *     names the code, the field, the value found and what was expected;
 *   - on success the last error is left as it was (call wdl_clear_error first
 *     when you want to know whether a particular call set it).
 * Error codes equal `ErrorCode` in js/src/errors.ts (a test parses both files).
 *
 * Threads: the library keeps its state (host table, last error, GPU pointer
 * ledger) in plain globals. wasm in the browser runs it on one thread; native
 * builds (tests) must not call it from two threads at once.
 */
#ifndef WEBDLPACK_WEBDLPACK_H_
#define WEBDLPACK_WEBDLPACK_H_

#include <stddef.h>
#include <stdint.h>

#include "dlpack.h"
#include "host.h"

/** Major version of this C API; a change breaks callers or the host table. */
#define WEBDLPACK_VERSION_MAJOR 0
/** Minor version of this C API; a change only adds functions. */
#define WEBDLPACK_VERSION_MINOR 1

/**
 * WDL_EXPORT marks a function the library exports.
 * Under emscripten it is kept alive and exported from the wasm module
 * (side module or static library); natively it has default visibility.
 */
#if defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#define WDL_EXPORT __attribute__((used, visibility("default"))) EMSCRIPTEN_KEEPALIVE
#elif defined(__GNUC__) || defined(__clang__)
#define WDL_EXPORT __attribute__((visibility("default")))
#else
#define WDL_EXPORT
#endif

/* After the includes above: emscripten.h must not be read inside extern "C" (it has C++ templates). */
#ifdef __cplusplus
extern "C" {
#endif

/** Largest ndim a DLTensor may have (the JS codec uses the same limit). */
#define WDL_MAX_NDIM 32

/** Alignment in bytes of CPU data the library allocates (DLPack recommends 256; JAX needs 64 for zero-copy). */
#define WDL_CPU_ALIGNMENT 256u

/**
 * Error codes. The numbers equal `ErrorCode` in js/src/errors.ts and the
 * Python package's codes; never renumber, only append.
 */
typedef enum wdl_error_code {
  WDL_OK = 0,                    /**< No error. */
  WDL_INVALID_ARGUMENT = 1,      /**< An argument has a value outside its domain. */
  WDL_OUT_OF_BOUNDS = 2,         /**< Tensor bytes fall outside linear memory / the buffer. */
  WDL_NULL_POINTER = 3,          /**< A pointer that must not be NULL is NULL. */
  WDL_BAD_NDIM = 4,              /**< ndim outside 0..WDL_MAX_NDIM. */
  WDL_BAD_SHAPE = 5,             /**< A negative extent. */
  WDL_BAD_STRIDES = 6,           /**< |stride| > 2^53 - 1, or a packed sub-byte tensor that is not C-contiguous. */
  WDL_SIZE_OVERFLOW = 7,         /**< An extent, count, size, byte_offset or element offset past 2^53 - 1, or a CPU
                                      tensor larger than the whole memory. */
  WDL_BAD_DTYPE = 8,             /**< Unknown dtype code or bits/lanes not allowed for it. */
  WDL_BAD_DEVICE = 9,            /**< Unknown device type, a negative device id, or a CPU device id other than 0. */
  WDL_VERSION_MISMATCH = 10,     /**< DLPack or host-table major version differs. */
  WDL_BAD_FLAGS = 11,            /**< Unknown DLPACK_FLAG_BITMASK_* bits. */
  WDL_NO_WEBGPU = 12,            /**< The JS host has no WebGPU. */
  WDL_NO_ADAPTER = 13,           /**< The JS host found no WebGPU adapter. */
  WDL_UNKNOWN_DEVICE = 14,       /**< No WebGPU device with this id. */
  WDL_DEVICE_LOST = 15,          /**< The device behind a GPU pointer was lost. */
  WDL_INVALID_POINTER = 16,      /**< A GPU pointer that was never issued (or not by this library). */
  WDL_STALE_POINTER = 17,        /**< A GPU pointer whose buffer was freed. */
  WDL_DOUBLE_FREE = 18,          /**< A GPU pointer freed twice. */
  WDL_OUT_OF_MEMORY = 19,        /**< malloc or the GPU allocation failed. */
  WDL_ALREADY_CONSUMED = 20,     /**< A managed tensor or handle was already taken. */
  WDL_DISPOSED = 21,             /**< The object was disposed. */
  WDL_INCOMPATIBLE_CONTEXT = 22, /**< Two webdlpack contexts with different majors. */
  WDL_COPY_REQUIRED = 23,        /**< Zero-copy is impossible for this request. */
  WDL_UNSUPPORTED = 24,          /**< Not available (e.g. wdl_init not called, host entry missing). */
  WDL_GPU_ERROR = 25,            /**< A WebGPU validation/internal error reported by the host. */
} wdl_error_code;

/* (1) What JS must provide — the host table and wdl_gpu_buffer_info: webdlpack/host.h. */

/* ========================================================================
 * (2) WHAT C EXPORTS
 * ======================================================================== */

/* ---- Library and host ------------------------------------------------ */

/**
 * Install the host table. The table is copied, so the caller may free its
 * copy afterwards. Calling it again replaces the table (the GPU pointer
 * ledger is kept). gpu_alloc, gpu_free and gpu_query are required;
 * tensor_to_js, tensor_from_js and last_error may be NULL (the functions
 * that need them then fail with WDL_UNSUPPORTED).
 * Returns 0, or -1 with WDL_NULL_POINTER (host NULL or a required entry
 * NULL) / WDL_VERSION_MISMATCH (abi_version or struct_size differ).
 */
WDL_EXPORT int wdl_init(const wdl_host_table *host);

/** 1 if wdl_init succeeded, else 0. */
WDL_EXPORT int wdl_is_initialized(void);

/** Forget the host table (e.g. before JS removes its functions). Never fails. */
WDL_EXPORT void wdl_shutdown(void);

/** (WEBDLPACK_VERSION_MAJOR << 16) | WEBDLPACK_VERSION_MINOR of the built library. */
WDL_EXPORT uint32_t wdl_version(void);

/* ---- Last error -------------------------------------------------------- */

/** Code of the most recent failure (WDL_OK after wdl_clear_error). */
WDL_EXPORT int wdl_last_error_code(void);

/**
 * Message of the most recent failure, "" when none. Format:
 * "[CODE_NAME] what failed; field F; value V; expected E".
 * The string is owned by the library and valid until the next failing call.
 */
WDL_EXPORT const char *wdl_last_error_message(void);

/** Reset the last error to WDL_OK and "". */
WDL_EXPORT void wdl_clear_error(void);

/**
 * Set the last error (for hosts and bindings reporting into C).
 * `msg` may be NULL; it is copied (truncated to 1023 bytes).
 * Returns 0, or -1 if `code` is not a known wdl_error_code (the last error
 * then becomes WDL_INVALID_ARGUMENT naming the bad code).
 */
WDL_EXPORT int wdl_set_error(int code, const char *msg);

/** Name of a code ("OUT_OF_BOUNDS"), or "UNKNOWN" for other numbers. Static string. */
WDL_EXPORT const char *wdl_error_name(int code);

/* ---- Validation ---------------------------------------------------------- */

/**
 * Check a DLTensor by spec/validation-rules.json, the rule set the JS codec
 * and the Python package are tested against too (spec/validation-rules.md):
 * ndim in 0..32; shape non-NULL when ndim > 0 and every extent >= 0; every
 * extent, |stride|, byte_offset, the element count, the byte size and the
 * element offsets the strides reach (negative allowed) at most 2^53 - 1;
 * dtype code known and bits allowed for it (bool 8, bfloat 16, float
 * 16/32/64, int/uint 1/2/4/8/16/32/64, complex 32/64/128, fp8 types 8, fp6
 * types 6, fp4 4, opaque handle 8/16/32/64; lanes 1..65535, sub-byte types
 * too: an element is bits * lanes bits); sub-byte elements bit-packed, so a
 * sub-byte tensor must be C-contiguous; device type known, device id >= 0
 * and 0 for kDLCPU; data non-NULL unless the tensor has no elements.
 * When `memory_size` is nonzero and the device is kDLCPU, the tensor's size
 * must not exceed it and every byte of every element must lie in
 * [0, memory_size) (pass wdl_memory_size() in wasm).
 * Returns 0, or -1 with the matching code and a message naming the field.
 * Does not read the data.
 */
WDL_EXPORT int wdl_tensor_validate(const DLTensor *t, uint64_t memory_size);

/**
 * Check a DLManagedTensorVersioned: non-NULL, version.major ==
 * WDL_DLPACK_MAJOR_VERSION (else WDL_VERSION_MISMATCH), no unknown flag bits
 * (WDL_BAD_FLAGS), then its dl_tensor as wdl_tensor_validate does, except
 * that with DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED set each sub-byte
 * element takes one byte (and may then be strided).
 */
WDL_EXPORT int wdl_managed_tensor_validate(const DLManagedTensorVersioned *t, uint64_t memory_size);

/**
 * wdl_managed_tensor_validate(t, wdl_memory_size()): every check, against this module's linear memory (its
 * current size in wasm; no bounds in native builds, as with memory_size 0). For callers that pay per argument
 * (Python's ctypes in Pyodide, about 0.2 µs an argument; a 64-bit one is a BigInt from JS).
 */
WDL_EXPORT int wdl_managed_tensor_check(const DLManagedTensorVersioned *t);

/**
 * Bytes spanned by a valid tensor's elements (0 for an empty tensor), as
 * validated by wdl_tensor_validate with memory_size 0; writes it to *out.
 * Returns 0, or -1 (validation error, or NULL out).
 */
WDL_EXPORT int wdl_tensor_nbytes(const DLTensor *t, uint64_t *out);

/** Current size of linear memory in bytes in wasm; 0 in native builds (no check). */
WDL_EXPORT uint64_t wdl_memory_size(void);

/* ---- Managed tensors -------------------------------------------------------- */

/** A release callback for the data of a managed tensor: called once with its ctx. */
typedef void (*wdl_release_fn)(void *ctx);

/**
 * Make a DLManagedTensorVersioned (version 1.1) in ONE allocation that holds
 * the struct, a copy of shape and a copy of strides (C-contiguous strides when
 * `strides` is NULL: the result's strides are never NULL when ndim > 0, as
 * DLPack 1.2 requires). The tensor
 * is validated first (wdl_tensor_validate with memory_size 0 in native builds,
 * the current linear-memory size in wasm) and flags must be known bits.
 * Ownership: the caller owns the result and gives it away by calling its
 * deleter once (directly, via wdl_managed_tensor_release, or by handing it to
 * a consumer). The deleter calls data_release(ctx) once if data_release is
 * non-NULL, then frees the block. `data` is borrowed until then.
 * On failure returns NULL and data_release is NOT called.
 * Note: structs passed by value are passed as hidden pointers in the wasm
 * C ABI; JS/ctypes callers should prefer wdl_managed_tensor_create_from_view.
 */
WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create(DLDevice device, DLDataType dtype, int32_t ndim,
                                                               const int64_t *shape, const int64_t *strides, void *data,
                                                               uint64_t byte_offset, uint64_t flags,
                                                               wdl_release_fn data_release, void *ctx);

/**
 * Pointer-argument form of wdl_managed_tensor_create: device, dtype, ndim,
 * shape, strides, data and byte_offset are read from `view` (which is only
 * read during the call; shape/strides are copied).
 */
WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create_from_view(const DLTensor *view, uint64_t flags,
                                                                         wdl_release_fn data_release, void *ctx);

/**
 * One-argument form of wdl_managed_tensor_create_from_view(view, 0, NULL, NULL): a writable managed tensor
 * that borrows the view's data (the caller keeps it alive until the deleter has run; nothing is called for it).
 * Same checks, same block, same deleter. For callers that pay per argument: Python's ctypes in Pyodide costs
 * about 0.2 µs an argument, so this call costs about half of the four-argument one there.
 */
WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create_borrowed(const DLTensor *view);

/**
 * Make a C-contiguous CPU tensor whose data the library allocates
 * (WDL_CPU_ALIGNMENT-byte aligned, zero-filled) and owns: the deleter frees it. Returns NULL on
 * failure (validation error or WDL_OUT_OF_MEMORY).
 */
WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu(DLDataType dtype, int32_t ndim, const int64_t *shape);

/** Pointer/split-argument form of wdl_managed_tensor_alloc_cpu (dtype read from *dtype). */
WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu_p(const DLDataType *dtype, int32_t ndim,
                                                                    const int64_t *shape);

/**
 * Give up a managed tensor: call its deleter once (if it has one). NULL is
 * allowed and does nothing. Works for any DLManagedTensorVersioned, not only
 * the library's. After it returns the caller must not touch `t` again;
 * calling it twice on the same tensor is a use-after-free.
 * Returns 0 (it cannot fail).
 */
WDL_EXPORT int wdl_managed_tensor_release(DLManagedTensorVersioned *t);

/** Managed tensors made by this library and not yet deleted (leak checks). */
WDL_EXPORT uint32_t wdl_managed_tensor_live_count(void);

/* ---- WebGPU memory via the host ------------------------------------------- */

/** Live GPU pointers this library allocated and has not freed. */
typedef struct wdl_webgpu_stats {
  uint64_t live_bytes; /**< Sum of requested sizes of live pointers. */
  uint32_t live_count; /**< Number of live pointers. */
  uint32_t reserved;   /**< Always 0. */
} wdl_webgpu_stats;

/**
 * Allocate a WebGPU buffer of `nbytes` bytes (0 < nbytes <= 2^53) on device
 * `device_id` (>= 0) with GPUBufferUsage `usage` (0 = host default:
 * STORAGE | COPY_SRC | COPY_DST) through the host. Returns the GPU pointer
 * (nonzero; store it in DLTensor.data with device kDLWebGPU), or 0 with the
 * last error set (argument errors here, allocation errors from the host).
 * The caller owns the pointer and frees it with wdl_webgpu_free.
 */
WDL_EXPORT uint32_t wdl_webgpu_alloc(int32_t device_id, uint64_t nbytes, uint32_t usage);

/**
 * Free a GPU pointer that wdl_webgpu_alloc returned. Pointers the library did
 * not allocate fail with WDL_INVALID_POINTER, pointers it already freed with
 * WDL_DOUBLE_FREE — both checked in C before JS is asked. If the host fails
 * (e.g. WDL_DEVICE_LOST) its error is returned; a pointer JS no longer has (its
 * device was lost, or JS reports it WDL_STALE_POINTER / WDL_DOUBLE_FREE /
 * WDL_INVALID_POINTER) is forgotten anyway, other host failures keep it live so
 * the call can be retried.
 * Returns 0 or -1.
 */
WDL_EXPORT int wdl_webgpu_free(uint32_t ptr);

/** Ask the host about any GPU pointer (not only this library's). Returns 0 or -1. */
WDL_EXPORT int wdl_webgpu_query(uint32_t ptr, wdl_gpu_buffer_info *out);

/**
 * Resolve the GPU buffer behind a WebGPU tensor through the host, as a C
 * consumer of a tensor handed over by JS or Python does before using it.
 * Checks that `t` is well formed and on kDLWebGPU, that its data (a GPU
 * pointer, any producer's) is live on the host (else the host's
 * WDL_STALE_POINTER / WDL_INVALID_POINTER / WDL_DEVICE_LOST), that the pointer's
 * device is `t->device.device_id` (WDL_INVALID_POINTER) and that every byte the
 * elements reach, from data + byte_offset, lies inside the buffer
 * (WDL_OUT_OF_BOUNDS). Fills *out like wdl_webgpu_query. Returns 0 or -1.
 */
WDL_EXPORT int wdl_webgpu_tensor_query(const DLTensor *t, wdl_gpu_buffer_info *out);

/** Copy the ledger of live pointers into *out. Returns 0, or -1 if out is NULL. */
WDL_EXPORT int wdl_webgpu_stats_get(wdl_webgpu_stats *out);

/* ---- Hand-off to and from JS ------------------------------------------------ */

/**
 * Hand a managed tensor to JS. The tensor is checked first
 * (wdl_managed_tensor_validate with the current memory size in wasm).
 * Returns a handle > 0: JS owns `t` now and the caller must not touch it.
 * Returns 0 on failure: the caller still owns `t`.
 */
WDL_EXPORT int32_t wdl_tensor_to_js(DLManagedTensorVersioned *t);

/**
 * Take the managed tensor JS published under `handle` (> 0). The caller owns
 * the result and must call its deleter once. If the struct is unusable
 * (version major differs, bad flags, invalid tensor) the library calls its
 * deleter itself, as the DLPack contract asks of a consumer, and returns NULL.
 */
WDL_EXPORT DLManagedTensorVersioned *wdl_tensor_from_js(int32_t handle);

#ifdef __cplusplus
}
#endif
#endif /* WEBDLPACK_WEBDLPACK_H_ */
