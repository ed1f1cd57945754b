/*
 * test_dlpack_order_upstream_first.c — a framework that includes upstream
 * dlpack.h (1.x) and then webdlpack.h: webdlpack uses upstream's types.
 * Built with -I of the apache-tvm-ffi wheel's DLPack headers (wasm/wasm.mk).
 */
#include <dlpack/dlpack.h>

#include "webdlpack/webdlpack.h"

#include "dlpack_compat_cases.h"

/* Upstream defined the types: its version macros are in force, its 1.2+ API is there. */
static void upstream_definitions_in_force(void) {
  CHECK_EQ_INT(DLPACK_MAJOR_VERSION, 1);
  CHECK(DLPACK_MINOR_VERSION >= WDL_DLPACK_MINOR_VERSION);
#if DLPACK_MINOR_VERSION >= 2
  CHECK(sizeof(DLPackExchangeAPIHeader) == sizeof(DLPackVersion) + sizeof(void *));
#endif
}

const wdl_test_case wdl_dlpack_upstream_first_cases[] = {
    {"dlpack_upstream_first", "upstream_definitions_in_force", upstream_definitions_in_force},
    {"dlpack_upstream_first", "library_tensor_reads_back", compat_library_tensor_reads_back},
    {"dlpack_upstream_first", "framework_view_wraps", compat_framework_view_wraps},
    {"dlpack_upstream_first", "other_major_refused", compat_other_major_refused},
};
const size_t wdl_dlpack_upstream_first_count = WDL_COUNT_OF(wdl_dlpack_upstream_first_cases);
