/*
 * internal.h — helpers shared by the library's source files; not installed.
 */
#ifndef WEBDLPACK_INTERNAL_H_
#define WEBDLPACK_INTERNAL_H_

#include "webdlpack/webdlpack.h"

/** Internal functions: linked across the library's files, never exported. */
#if defined(__GNUC__) || defined(__clang__)
#define WDL_INTERNAL __attribute__((visibility("hidden")))
#else
#define WDL_INTERNAL
#endif

/** Capacity of the last-error message buffer, including the NUL. */
#define WDL_MESSAGE_CAP 1024

/**
 * Record a failure: "[NAME] what; field F; value V; expected E".
 * `field` and `expected` may be NULL (then omitted); `value_fmt` is a printf
 * format for the value (may be NULL). Always returns -1 so callers can
 * `return wdl__fail(...)`.
 */
WDL_INTERNAL int wdl__fail(wdl_error_code code, const char *what, const char *field, const char *expected,
                           const char *value_fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/** The installed host table, or NULL before wdl_init (or after wdl_shutdown). */
WDL_INTERNAL const wdl_host_table *wdl__host(void);

/** Counter bumped whenever the last error is set (to see if a callee set it). */
WDL_INTERNAL uint32_t wdl__error_seq(void);

/**
 * After a host entry `entry` returned failure: if the host did not already
 * call wdl_set_error during the call (the error counter still equals
 * `seq_before`), fetch the host's error via last_error, or record a generic
 * WDL_GPU_ERROR. Returns -1.
 */
WDL_INTERNAL int wdl__host_failed(const char *entry, uint32_t seq_before);

/**
 * Check `t`'s structure (ndim, shape, strides, dtype) and give the bytes its
 * elements reach relative to data + byte_offset: [*lo, *hi) (lo <= 0 with
 * negative strides), and the element count. Returns 0, or -1 with the last error set.
 */
WDL_INTERNAL int wdl__byte_span(const DLTensor *t, int64_t *lo, int64_t *hi, uint64_t *count);

/** Bits of one element (bits * lanes), for a dtype already validated. */
WDL_INTERNAL uint64_t wdl__element_bits(DLDataType dtype);

/** Memory size to validate against: linear-memory size in wasm, 0 natively. */
WDL_INTERNAL uint64_t wdl__default_memory_size(void);

#endif /* WEBDLPACK_INTERNAL_H_ */
