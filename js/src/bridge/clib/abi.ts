/**
 * TypeScript mirror of the webdlpack C library's ABI
 * (`wasm/include/webdlpack/webdlpack.h` and the `host.h` it includes, the source of truth).
 *
 * Two blocks, as in the headers:
 *   (1) what JS must provide — the host table (`wdl_host_table`, host.h): its layout,
 *       the addFunction signature of each entry and the TS type of each entry;
 *   (2) what C exports — one TS type per C entry point, whose doc comment is
 *       the C prototype.
 *
 * Addresses (pointers into linear memory) and GPU pointers are unsigned 32-bit
 * values; wasm hands them to JS as signed i32, so callers apply `>>> 0`.
 * `uint64_t` arguments and results are BigInt (the side module is built with
 * WASM_BIGINT, like Pyodide's runtime). Layout numbers are checked against the
 * emcc build by tests/js/clib-layout.test.ts (build/layout/wasm32.json).
 */

/** API version of the C library this mirror describes (`WEBDLPACK_VERSION_MAJOR/MINOR`). */
export const CLIB_VERSION = Object.freeze({ major: 0, minor: 1 });

/** `WDL_HOST_TABLE_VERSION`: written into `wdl_host_table.abi_version`. */
export const HOST_TABLE_VERSION = 1;

/** `WDL_MAX_NDIM`. */
export const CLIB_MAX_NDIM = 32;

/** Capacity of the library's last-error message buffer (bytes, including the NUL). */
export const CLIB_MESSAGE_CAP = 1024;

/* ==========================================================================
 * (1) WHAT JS MUST PROVIDE — wdl_host_table
 * ========================================================================== */

/** Byte layout of `wdl_host_table` on wasm32 (size, alignment, field offsets). */
export const HOST_TABLE_LAYOUT = Object.freeze({
  size: 32,
  align: 4,
  abi_version: 0,
  struct_size: 4,
  gpu_alloc: 8,
  gpu_free: 12,
  gpu_query: 16,
  tensor_to_js: 20,
  tensor_from_js: 24,
  last_error: 28,
});

/** Byte layout of `wdl_gpu_buffer_info` on wasm32. */
export const GPU_BUFFER_INFO_LAYOUT = Object.freeze({
  size: 32,
  align: 8,
  nbytes: 0,
  allocated_nbytes: 8,
  device_id: 16,
  usage: 20,
  owned: 24,
  reserved: 28,
});

/** Byte layout of `wdl_webgpu_stats` on wasm32. */
export const WEBGPU_STATS_LAYOUT = Object.freeze({
  size: 16,
  align: 8,
  live_bytes: 0,
  live_count: 8,
  reserved: 12,
});

/** addFunction signature of each host-table entry (all arguments i32). */
export const HOST_SIGNATURES = Object.freeze({
  gpu_alloc: "iiiii",
  gpu_free: "ii",
  gpu_query: "iii",
  tensor_to_js: "ii",
  tensor_from_js: "ii",
  last_error: "iii",
} as const);

/** Name of a function-pointer field of `wdl_host_table`. */
export type HostEntryName = keyof typeof HOST_SIGNATURES;

/**
 * `uint32_t (*gpu_alloc)(int32_t device_id, uint32_t nbytes_lo, uint32_t nbytes_hi, uint32_t usage);`
 * Allocate (nbytes_hi * 2^32 + nbytes_lo) bytes; usage 0 = default. Returns a GPU pointer, 0 on failure.
 */
export type HostGpuAlloc = (deviceId: number, nbytesLo: number, nbytesHi: number, usage: number) => number;

/** `int32_t (*gpu_free)(uint32_t ptr);` Returns 0, or -1 on failure. */
export type HostGpuFree = (ptr: number) => number;

/** `int32_t (*gpu_query)(uint32_t ptr, wdl_gpu_buffer_info *out);` Returns 0, or -1 on failure. */
export type HostGpuQuery = (ptr: number, out: number) => number;

/**
 * `int32_t (*tensor_to_js)(DLManagedTensorVersioned *t);`
 * Take ownership; return a handle > 0, or <= 0 on failure (C keeps ownership).
 */
export type HostTensorToJs = (managed: number) => number;

/**
 * `DLManagedTensorVersioned *(*tensor_from_js)(int32_t handle);`
 * Give up the tensor published under `handle`; NULL (0) on failure.
 */
export type HostTensorFromJs = (handle: number) => number;

/**
 * `int32_t (*last_error)(char *buf, uint32_t cap);`
 * Write the last host error message (NUL-terminated, at most cap bytes); return its code.
 */
export type HostLastError = (buf: number, cap: number) => number;

/** The JS functions behind a `wdl_host_table`. */
export interface HostFunctions {
  gpu_alloc: HostGpuAlloc;
  gpu_free: HostGpuFree;
  gpu_query: HostGpuQuery;
  tensor_to_js: HostTensorToJs;
  tensor_from_js: HostTensorFromJs;
  last_error: HostLastError;
}

/* ==========================================================================
 * (2) WHAT C EXPORTS
 * ========================================================================== */

/**
 * Every function the C library exports, by its C name; each one's doc comment is its C prototype. Pointers and
 * addresses are numbers (apply `>>> 0`: raw exports return them signed), 64-bit integers bigints.
 */
export interface WebDLPackCExports {
  /** `int wdl_init(const wdl_host_table *host);` */
  wdl_init(host: number): number;
  /** `int wdl_is_initialized(void);` */
  wdl_is_initialized(): number;
  /** `void wdl_shutdown(void);` */
  wdl_shutdown(): void;
  /** `uint32_t wdl_version(void);` — (major << 16) | minor. */
  wdl_version(): number;
  /** `int wdl_last_error_code(void);` */
  wdl_last_error_code(): number;
  /** `const char *wdl_last_error_message(void);` — address of a NUL-terminated UTF-8 string owned by C. */
  wdl_last_error_message(): number;
  /** `void wdl_clear_error(void);` */
  wdl_clear_error(): void;
  /** `int wdl_set_error(int code, const char *msg);` */
  wdl_set_error(code: number, msg: number): number;
  /** `const char *wdl_error_name(int code);` */
  wdl_error_name(code: number): number;
  /** `int wdl_tensor_validate(const DLTensor *t, uint64_t memory_size);` */
  wdl_tensor_validate(tensor: number, memorySize: bigint): number;
  /** `int wdl_managed_tensor_validate(const DLManagedTensorVersioned *t, uint64_t memory_size);` */
  wdl_managed_tensor_validate(managed: number, memorySize: bigint): number;
  /** `int wdl_managed_tensor_check(const DLManagedTensorVersioned *t);` — validate(t, wdl_memory_size()). */
  wdl_managed_tensor_check(managed: number): number;
  /** `int wdl_tensor_nbytes(const DLTensor *t, uint64_t *out);` */
  wdl_tensor_nbytes(tensor: number, out: number): number;
  /** `uint64_t wdl_memory_size(void);` */
  wdl_memory_size(): bigint;
  /**
   * `DLManagedTensorVersioned *wdl_managed_tensor_create(DLDevice device, DLDataType dtype, int32_t ndim,
   *     const int64_t *shape, const int64_t *strides, void *data, uint64_t byte_offset, uint64_t flags,
   *     void (*data_release)(void *ctx), void *ctx);`
   * In the wasm C ABI `device` and `dtype` travel as addresses of the structs.
   */
  wdl_managed_tensor_create(
    device: number,
    dtype: number,
    ndim: number,
    shape: number,
    strides: number,
    data: number,
    byteOffset: bigint,
    flags: bigint,
    dataRelease: number,
    ctx: number,
  ): number;
  /**
   * `DLManagedTensorVersioned *wdl_managed_tensor_create_from_view(const DLTensor *view, uint64_t flags,
   *     void (*data_release)(void *ctx), void *ctx);`
   */
  wdl_managed_tensor_create_from_view(view: number, flags: bigint, dataRelease: number, ctx: number): number;
  /** `DLManagedTensorVersioned *wdl_managed_tensor_create_borrowed(const DLTensor *view);` — create_from_view(view, 0, NULL, NULL). */
  wdl_managed_tensor_create_borrowed(view: number): number;
  /**
   * `DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu(DLDataType dtype, int32_t ndim, const int64_t *shape);`
   * In the wasm C ABI `dtype` travels as the address of the struct.
   */
  wdl_managed_tensor_alloc_cpu(dtype: number, ndim: number, shape: number): number;
  /** `DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu_p(const DLDataType *dtype, int32_t ndim, const int64_t *shape);` */
  wdl_managed_tensor_alloc_cpu_p(dtype: number, ndim: number, shape: number): number;
  /** `int wdl_managed_tensor_release(DLManagedTensorVersioned *t);` */
  wdl_managed_tensor_release(managed: number): number;
  /** `uint32_t wdl_managed_tensor_live_count(void);` */
  wdl_managed_tensor_live_count(): number;
  /** `uint32_t wdl_webgpu_alloc(int32_t device_id, uint64_t nbytes, uint32_t usage);` */
  wdl_webgpu_alloc(deviceId: number, nbytes: bigint, usage: number): number;
  /** `int wdl_webgpu_free(uint32_t ptr);` */
  wdl_webgpu_free(ptr: number): number;
  /** `int wdl_webgpu_query(uint32_t ptr, wdl_gpu_buffer_info *out);` */
  wdl_webgpu_query(ptr: number, out: number): number;
  /** `int wdl_webgpu_tensor_query(const DLTensor *t, wdl_gpu_buffer_info *out);` — the buffer behind a WebGPU tensor, bounds checked. */
  wdl_webgpu_tensor_query(tensor: number, out: number): number;
  /** `int wdl_webgpu_stats_get(wdl_webgpu_stats *out);` */
  wdl_webgpu_stats_get(out: number): number;
  /** `int32_t wdl_tensor_to_js(DLManagedTensorVersioned *t);` */
  wdl_tensor_to_js(managed: number): number;
  /** `DLManagedTensorVersioned *wdl_tensor_from_js(int32_t handle);` */
  wdl_tensor_from_js(handle: number): number;
}

/** The C names of {@link WebDLPackCExports}, for checking a loaded module. */
export const CLIB_EXPORT_NAMES: readonly (keyof WebDLPackCExports)[] = Object.freeze([
  "wdl_init",
  "wdl_is_initialized",
  "wdl_shutdown",
  "wdl_version",
  "wdl_last_error_code",
  "wdl_last_error_message",
  "wdl_clear_error",
  "wdl_set_error",
  "wdl_error_name",
  "wdl_tensor_validate",
  "wdl_managed_tensor_validate",
  "wdl_managed_tensor_check",
  "wdl_tensor_nbytes",
  "wdl_memory_size",
  "wdl_managed_tensor_create",
  "wdl_managed_tensor_create_from_view",
  "wdl_managed_tensor_create_borrowed",
  "wdl_managed_tensor_alloc_cpu",
  "wdl_managed_tensor_alloc_cpu_p",
  "wdl_managed_tensor_release",
  "wdl_managed_tensor_live_count",
  "wdl_webgpu_alloc",
  "wdl_webgpu_free",
  "wdl_webgpu_query",
  "wdl_webgpu_tensor_query",
  "wdl_webgpu_stats_get",
  "wdl_tensor_to_js",
  "wdl_tensor_from_js",
] as const);
