/* C compiled to wasm: allocate a WebGPU buffer through the page's webdlpack context,
 * wrap it in a DLPack 1.1 managed tensor and hand that to JS, which owns it from then on.
 * Run by the C tests (tests/c/test_example.c) and, built with emcc, in Chromium
 * (tests/browser/readme-examples.spec.ts). */
#include <stdint.h>
#include <stdio.h>

#include <webdlpack/webdlpack.h> /* DLPack 1.1 structs + the webdlpack C API */

/* The tensor's release callback: runs once, when JS disposes the tensor. */
static void free_gpu_buffer(void *ctx) { wdl_webgpu_free((uint32_t)(uintptr_t)ctx); }

/* Make a float32[1024] tensor on webgpu:0 and give it to JS: its handle (> 0), or 0 on failure. */
int32_t example_gpu_tensor(void) {
  uint32_t ptr = wdl_webgpu_alloc(/*device_id=*/0, 1024 * sizeof(float), /*usage=*/0 /* default */);
  if (ptr == 0) {
    fprintf(stderr, "alloc: %s\n", wdl_last_error_message());
    return 0;
  }
  int64_t shape[1] = {1024}; /* copied into the tensor */
  DLManagedTensorVersioned *t = wdl_managed_tensor_create(
      (DLDevice){kDLWebGPU, 0}, (DLDataType){kDLFloat, 32, 1}, 1, shape, /*strides=*/NULL, (void *)(uintptr_t)ptr,
      /*byte_offset=*/0, /*flags=*/0, free_gpu_buffer, (void *)(uintptr_t)ptr);
  if (t == NULL) {
    fprintf(stderr, "wrap: %s\n", wdl_last_error_message());
    wdl_webgpu_free(ptr);
    return 0;
  }
  int32_t handle = wdl_tensor_to_js(t); /* JS owns it now and calls the deleter once */
  if (handle == 0) {
    fprintf(stderr, "to JS: %s\n", wdl_last_error_message());
    wdl_managed_tensor_release(t);
  }
  return handle;
}
