/*
 * webgpu.c — GPU pointers through the JS host, with a C-side ledger of the
 * pointers this library allocated (live count/bytes, double-free detection).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/** Largest size the JS host can represent exactly (Number.MAX_SAFE_INTEGER + 1). */
#define WDL_MAX_GPU_BYTES (1ull << 53)
/** How many freed pointers are remembered to tell DOUBLE_FREE from INVALID_POINTER. */
#define WDL_FREED_RING 256

typedef struct {
  uint32_t ptr;
  int32_t device_id;
  uint64_t nbytes;
} wdl_live;

static wdl_live *g_live = NULL;
static uint32_t g_live_len = 0, g_live_cap = 0;
static uint64_t g_live_bytes = 0;
static uint32_t g_freed[WDL_FREED_RING];
static uint32_t g_freed_next = 0;

static int find_live(uint32_t ptr) {
  for (uint32_t i = 0; i < g_live_len; i++) {
    if (g_live[i].ptr == ptr) return (int)i;
  }
  return -1;
}

static int was_freed(uint32_t ptr) {
  for (uint32_t i = 0; i < WDL_FREED_RING; i++) {
    if (g_freed[i] == ptr) return 1;
  }
  return 0;
}

static void forget_freed(uint32_t ptr) {
  for (uint32_t i = 0; i < WDL_FREED_RING; i++) {
    if (g_freed[i] == ptr) g_freed[i] = 0;
  }
}

static int need_host(const char *fn) {
  if (wdl__host() != NULL) return 0;
  return wdl__fail(WDL_UNSUPPORTED, "wdl_init has not been called", fn, "a host table installed by wdl_init", NULL);
}

WDL_EXPORT uint32_t wdl_webgpu_alloc(int32_t device_id, uint64_t nbytes, uint32_t usage) {
  if (device_id < 0) {
    wdl__fail(WDL_UNKNOWN_DEVICE, "negative device id", "device_id", "device_id >= 0", "%" PRId32, device_id);
    return 0;
  }
  if (nbytes == 0 || nbytes > WDL_MAX_GPU_BYTES) {
    wdl__fail(WDL_INVALID_ARGUMENT, "buffer size out of range", "nbytes", "0 < nbytes <= 2^53", "%" PRIu64, nbytes);
    return 0;
  }
  if (need_host("wdl_webgpu_alloc") != 0) return 0;
  if (g_live_len == g_live_cap) {
    uint32_t cap = g_live_cap ? g_live_cap * 2 : 16;
    wdl_live *grown = (wdl_live *)realloc(g_live, cap * sizeof(wdl_live));
    if (grown == NULL) {
      wdl__fail(WDL_OUT_OF_MEMORY, "cannot grow the GPU pointer ledger", "nbytes", "memory for the ledger", "%" PRIu64,
                nbytes);
      return 0;
    }
    g_live = grown;
    g_live_cap = cap;
  }
  uint32_t seq = wdl__error_seq();
  uint32_t ptr = wdl__host()->gpu_alloc(device_id, (uint32_t)nbytes, (uint32_t)(nbytes >> 32), usage);
  if (ptr == 0) {
    wdl__host_failed("wdl_host_table.gpu_alloc", seq);
    return 0;
  }
  if (find_live(ptr) >= 0) {
    /* The host issued a pointer that is still live: refuse to track it twice. */
    wdl__fail(WDL_GPU_ERROR, "host returned a pointer that is already live", "wdl_host_table.gpu_alloc",
              "a fresh GPU pointer", "0x%08" PRIx32, ptr);
    return 0;
  }
  forget_freed(ptr);
  g_live[g_live_len].ptr = ptr;
  g_live[g_live_len].device_id = device_id;
  g_live[g_live_len].nbytes = nbytes;
  g_live_len++;
  g_live_bytes += nbytes;
  return ptr;
}

WDL_EXPORT int wdl_webgpu_free(uint32_t ptr) {
  if (ptr == 0)
    return wdl__fail(WDL_INVALID_POINTER, "GPU pointer is 0", "ptr", "a pointer from wdl_webgpu_alloc", "0");
  int idx = find_live(ptr);
  if (idx < 0) {
    if (was_freed(ptr)) {
      return wdl__fail(WDL_DOUBLE_FREE, "GPU pointer already freed", "ptr", "a live pointer from wdl_webgpu_alloc",
                       "0x%08" PRIx32, ptr);
    }
    return wdl__fail(WDL_INVALID_POINTER, "GPU pointer was not allocated by wdl_webgpu_alloc", "ptr",
                     "a live pointer from wdl_webgpu_alloc", "0x%08" PRIx32, ptr);
  }
  if (need_host("wdl_webgpu_free") != 0) return -1;
  uint32_t seq = wdl__error_seq();
  int32_t rc = wdl__host()->gpu_free(ptr);
  if (rc != 0) {
    wdl__host_failed("wdl_host_table.gpu_free", seq);
    int32_t code = wdl_last_error_code();
    /* Gone on the JS side already (its device was lost, or JS freed it: the pointer is stale, double-freed or
     * unknown there): forget it here too, but still report why. Any other failure may be retried. */
    if (code != WDL_DEVICE_LOST && code != WDL_STALE_POINTER && code != WDL_DOUBLE_FREE &&
        code != WDL_INVALID_POINTER) {
      return -1;
    }
  }
  g_live_bytes -= g_live[idx].nbytes;
  g_live[idx] = g_live[g_live_len - 1];
  g_live_len--;
  g_freed[g_freed_next] = ptr;
  g_freed_next = (g_freed_next + 1) % WDL_FREED_RING;
  return rc != 0 ? -1 : 0;
}

WDL_EXPORT int wdl_webgpu_query(uint32_t ptr, wdl_gpu_buffer_info *out) {
  if (out == NULL) return wdl__fail(WDL_NULL_POINTER, "out is NULL", "out", "a wdl_gpu_buffer_info address", NULL);
  if (ptr == 0) return wdl__fail(WDL_INVALID_POINTER, "GPU pointer is 0", "ptr", "a nonzero GPU pointer", "0");
  if (need_host("wdl_webgpu_query") != 0) return -1;
  memset(out, 0, sizeof *out);
  uint32_t seq = wdl__error_seq();
  if (wdl__host()->gpu_query(ptr, out) != 0) return wdl__host_failed("wdl_host_table.gpu_query", seq);
  return 0;
}

WDL_EXPORT int wdl_webgpu_stats_get(wdl_webgpu_stats *out) {
  if (out == NULL) return wdl__fail(WDL_NULL_POINTER, "out is NULL", "out", "a wdl_webgpu_stats address", NULL);
  out->live_bytes = g_live_bytes;
  out->live_count = g_live_len;
  out->reserved = 0;
  return 0;
}

WDL_EXPORT int wdl_webgpu_tensor_query(const DLTensor *t, wdl_gpu_buffer_info *out) {
  if (out == NULL) return wdl__fail(WDL_NULL_POINTER, "out is NULL", "out", "a wdl_gpu_buffer_info address", NULL);
  int64_t lo, hi;
  uint64_t count;
  if (wdl__byte_span(t, &lo, &hi, &count) != 0) return -1;
  if (t->device.device_type != kDLWebGPU) {
    return wdl__fail(WDL_BAD_DEVICE, "not a WebGPU tensor", "DLTensor.device.device_type", "kDLWebGPU (15)", "%d",
                     (int)t->device.device_type);
  }
  uint32_t ptr = (uint32_t)(uintptr_t)t->data;
  if (ptr == 0) {
    return wdl__fail(WDL_NULL_POINTER, "a WebGPU tensor's data is a GPU pointer, never 0", "DLTensor.data",
                     "a live GPU pointer", "0");
  }
  if (wdl_webgpu_query(ptr, out) != 0) return -1;
  if (out->device_id != t->device.device_id) {
    return wdl__fail(WDL_INVALID_POINTER, "the GPU pointer belongs to another device than the tensor says",
                     "DLTensor.device.device_id", "the pointer's device",
                     "%" PRId32 " (pointer 0x%08" PRIx32 " is on device %" PRId32 ")", t->device.device_id, ptr,
                     out->device_id);
  }
  if (count == 0) return 0;
  uint64_t offset = t->byte_offset, end;
  int below = lo < 0 && (uint64_t)(-lo) > offset;
  int above = __builtin_add_overflow(offset, (uint64_t)hi, &end) || end > out->allocated_nbytes;
  if (below || above) {
    int64_t first, last;
    if (offset <= (uint64_t)INT64_MAX && !__builtin_add_overflow((int64_t)offset, lo, &first) &&
        !__builtin_add_overflow((int64_t)offset, hi, &last)) {
      return wdl__fail(WDL_OUT_OF_BOUNDS, "the tensor reaches outside its GPU buffer", "DLTensor.byte_offset",
                       "every element inside the buffer",
                       "bytes [%" PRId64 ", %" PRId64 ") of a %" PRIu64 "-byte buffer", first, last,
                       out->allocated_nbytes);
    }
    /* byte_offset + extent does not fit an int64: name the parts instead of overflowing. */
    return wdl__fail(WDL_OUT_OF_BOUNDS, "the tensor reaches outside its GPU buffer", "DLTensor.byte_offset",
                     "every element inside the buffer",
                     "byte_offset %" PRIu64 " plus element bytes [%" PRId64 ", %" PRId64 ") of a %" PRIu64
                     "-byte buffer",
                     offset, lo, hi, out->allocated_nbytes);
  }
  return 0;
}
