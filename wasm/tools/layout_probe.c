/*
 * layout_probe.c — prints the wasm32 sizes and field offsets of the DLPack
 * structs and of webdlpack's own ABI structs as JSON, as the compiler sees
 * them. Built with emcc and run by node (see wasm/wasm.mk); the output,
 * build/layout/wasm32.json, is compared with js/src/dlpack/layout.ts and
 * js/src/bridge/clib/abi.ts by tests/js/clib-layout.test.ts, and with the
 * Python ctypes mirror by the Python tests.
 *
 * Format: {"StructName": {"size": N, "align": A, "field": offset, ...}, ...}
 * (the key names of LAYOUT in js/src/dlpack/layout.ts); nested
 * fields are written as their top-level offset only (e.g. "dl_tensor").
 */
#include <stddef.h>
#include <stdio.h>

#include "webdlpack/webdlpack.h"

static int g_first_struct = 1;

static void begin(const char *name, size_t size, size_t align) {
  printf("%s\n  \"%s\": {\"size\": %zu, \"align\": %zu", g_first_struct ? "{" : ",", name, size, align);
  g_first_struct = 0;
}

static void field(const char *name, size_t offset) { printf(", \"%s\": %zu", name, offset); }

static void end(void) { printf("}"); }

#define BEGIN(T) begin(#T, sizeof(T), _Alignof(T))
#define FIELD(T, f) field(#f, offsetof(T, f))

int main(void) {
  BEGIN(DLPackVersion);
  FIELD(DLPackVersion, major);
  FIELD(DLPackVersion, minor);
  end();
  BEGIN(DLDevice);
  FIELD(DLDevice, device_type);
  FIELD(DLDevice, device_id);
  end();
  BEGIN(DLDataType);
  FIELD(DLDataType, code);
  FIELD(DLDataType, bits);
  FIELD(DLDataType, lanes);
  end();
  BEGIN(DLTensor);
  FIELD(DLTensor, data);
  FIELD(DLTensor, device);
  FIELD(DLTensor, ndim);
  FIELD(DLTensor, dtype);
  FIELD(DLTensor, shape);
  FIELD(DLTensor, strides);
  FIELD(DLTensor, byte_offset);
  end();
  BEGIN(DLManagedTensor);
  FIELD(DLManagedTensor, dl_tensor);
  FIELD(DLManagedTensor, manager_ctx);
  FIELD(DLManagedTensor, deleter);
  end();
  BEGIN(DLManagedTensorVersioned);
  FIELD(DLManagedTensorVersioned, version);
  FIELD(DLManagedTensorVersioned, manager_ctx);
  FIELD(DLManagedTensorVersioned, deleter);
  FIELD(DLManagedTensorVersioned, flags);
  FIELD(DLManagedTensorVersioned, dl_tensor);
  end();
  BEGIN(wdl_host_table);
  FIELD(wdl_host_table, abi_version);
  FIELD(wdl_host_table, struct_size);
  FIELD(wdl_host_table, gpu_alloc);
  FIELD(wdl_host_table, gpu_free);
  FIELD(wdl_host_table, gpu_query);
  FIELD(wdl_host_table, tensor_to_js);
  FIELD(wdl_host_table, tensor_from_js);
  FIELD(wdl_host_table, last_error);
  end();
  BEGIN(wdl_gpu_buffer_info);
  FIELD(wdl_gpu_buffer_info, nbytes);
  FIELD(wdl_gpu_buffer_info, allocated_nbytes);
  FIELD(wdl_gpu_buffer_info, device_id);
  FIELD(wdl_gpu_buffer_info, usage);
  FIELD(wdl_gpu_buffer_info, owned);
  FIELD(wdl_gpu_buffer_info, reserved);
  end();
  BEGIN(wdl_webgpu_stats);
  FIELD(wdl_webgpu_stats, live_bytes);
  FIELD(wdl_webgpu_stats, live_count);
  FIELD(wdl_webgpu_stats, reserved);
  end();
  printf("\n}\n");
  return 0;
}
