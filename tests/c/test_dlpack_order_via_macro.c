/*
 * test_dlpack_order_via_macro.c — webdlpack.h first, asked to include upstream
 * itself (WEBDLPACK_DLPACK_HEADER): the framework gets upstream's whole header,
 * 1.2+ additions included, though webdlpack.h came first.
 * Built with -I of the apache-tvm-ffi wheel's DLPack headers (wasm/wasm.mk).
 */
#define WEBDLPACK_DLPACK_HEADER <dlpack/dlpack.h>
#include "webdlpack/webdlpack.h"

#include "dlpack_compat_cases.h"

/* Upstream's definitions are in force: its minor and its exchange API are visible. */
static void upstream_included_by_webdlpack(void) {
  CHECK(DLPACK_MINOR_VERSION >= 2);
#if DLPACK_MINOR_VERSION >= 2
  DLPackExchangeAPIHeader header;
  memset(&header, 0, sizeof header);
  header.version.major = DLPACK_MAJOR_VERSION;
  CHECK_EQ_INT(header.version.major, 1);
  CHECK(header.prev_api == NULL);
#endif
}

const wdl_test_case wdl_dlpack_via_macro_cases[] = {
    {"dlpack_via_macro", "upstream_included_by_webdlpack", upstream_included_by_webdlpack},
    {"dlpack_via_macro", "library_tensor_reads_back", compat_library_tensor_reads_back},
    {"dlpack_via_macro", "framework_view_wraps", compat_framework_view_wraps},
    {"dlpack_via_macro", "other_major_refused", compat_other_major_refused},
};
const size_t wdl_dlpack_via_macro_count = WDL_COUNT_OF(wdl_dlpack_via_macro_cases);
