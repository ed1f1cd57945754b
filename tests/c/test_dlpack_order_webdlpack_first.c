/*
 * test_dlpack_order_webdlpack_first.c — a framework that includes webdlpack.h
 * and then upstream dlpack.h: webdlpack defines the DLPack 1.1 core and
 * upstream's own include guard skips the second definition, so nothing clashes.
 * Built with -I of the apache-tvm-ffi wheel's DLPack headers (wasm/wasm.mk).
 */
#include "webdlpack/webdlpack.h"

#include <dlpack/dlpack.h>

#include "dlpack_compat_cases.h"

/* webdlpack's definitions are in force (upstream's guard skipped its body). */
static void webdlpack_definitions_in_force(void) {
  CHECK_EQ_INT(DLPACK_MAJOR_VERSION, WDL_DLPACK_MAJOR_VERSION);
  CHECK_EQ_INT(DLPACK_MINOR_VERSION, WDL_DLPACK_MINOR_VERSION);
  CHECK_EQ_INT(sizeof(DLManagedTensorVersioned), 2 * sizeof(void *) + 16 + sizeof(DLTensor));
}

const wdl_test_case wdl_dlpack_webdlpack_first_cases[] = {
    {"dlpack_webdlpack_first", "webdlpack_definitions_in_force", webdlpack_definitions_in_force},
    {"dlpack_webdlpack_first", "library_tensor_reads_back", compat_library_tensor_reads_back},
    {"dlpack_webdlpack_first", "framework_view_wraps", compat_framework_view_wraps},
    {"dlpack_webdlpack_first", "other_major_refused", compat_other_major_refused},
};
const size_t wdl_dlpack_webdlpack_first_count = WDL_COUNT_OF(wdl_dlpack_webdlpack_first_cases);
