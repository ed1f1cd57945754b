/*
 * managed.c — DLManagedTensorVersioned objects the library makes: one block
 * holding the struct, shape and strides; a deleter that releases the data
 * once and frees the block.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/** "WDLM": marks a live block made by this library. */
#define WDL_BLOCK_MAGIC 0x57444c4du
/** Written over the magic when the block is deleted (helps debuggers). */
#define WDL_BLOCK_DEAD 0xdeadbeefu

/* The struct must stay first: the deleter receives &block->tensor. */
typedef struct wdl_block {
  DLManagedTensorVersioned tensor;
  wdl_release_fn data_release;
  void *ctx;
  uint32_t magic;
  uint32_t reserved;
  int64_t dims[]; /* shape[ndim] then strides[ndim] (given, or C-contiguous) */
} wdl_block;

static uint32_t g_live_blocks = 0;

static void block_deleter(DLManagedTensorVersioned *self) {
  if (self == NULL) return;
  wdl_block *block = (wdl_block *)self;
  if (block->magic != WDL_BLOCK_MAGIC) return; /* not ours or already deleted: touch nothing */
  block->magic = WDL_BLOCK_DEAD;
  wdl_release_fn release = block->data_release;
  void *ctx = block->ctx;
  block->data_release = NULL;
  if (release != NULL) release(ctx);
  g_live_blocks--;
  free(block);
}

static void free_owned_data(void *ctx) { free(ctx); }

static DLManagedTensorVersioned *create(const DLTensor *view, uint64_t flags, wdl_release_fn data_release, void *ctx) {
  DLManagedTensorVersioned probe;
  memset(&probe, 0, sizeof probe);
  probe.version.major = WDL_DLPACK_MAJOR_VERSION;
  probe.version.minor = WDL_DLPACK_MINOR_VERSION;
  probe.flags = flags;
  probe.dl_tensor = *view;
  if (wdl_managed_tensor_validate(&probe, wdl__default_memory_size()) != 0) return NULL;

  size_t ndim = (size_t)view->ndim; /* validated: 0..32 */
  size_t ndims = 2 * ndim;          /* shape, then strides: always written (DLPack 1.2: never NULL when ndim > 0) */
  wdl_block *block = (wdl_block *)malloc(sizeof(wdl_block) + ndims * sizeof(int64_t));
  if (block == NULL) {
    wdl__fail(WDL_OUT_OF_MEMORY, "malloc failed for a managed tensor", "ndim", "memory for struct + shape + strides",
              "%zu", ndim);
    return NULL;
  }
  memset(block, 0, sizeof(wdl_block));
  block->tensor = probe;
  block->tensor.manager_ctx = block;
  block->tensor.deleter = block_deleter;
  block->data_release = data_release;
  block->ctx = ctx;
  block->magic = WDL_BLOCK_MAGIC;
  if (ndim > 0) memcpy(block->dims, view->shape, ndim * sizeof(int64_t));
  block->tensor.dl_tensor.shape = ndim > 0 ? block->dims : NULL;
  if (ndim > 0) {
    if (view->strides != NULL) {
      memcpy(block->dims + ndim, view->strides, ndim * sizeof(int64_t));
    } else {
      /* C-contiguous strides in elements; unsigned so an empty tensor's huge extents cannot overflow a signed int. */
      uint64_t stride = 1;
      for (size_t i = ndim; i-- > 0;) {
        block->dims[ndim + i] = (int64_t)stride;
        stride *= (uint64_t)view->shape[i];
      }
    }
    block->tensor.dl_tensor.strides = block->dims + ndim;
  }
  g_live_blocks++;
  return &block->tensor;
}

WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create_from_view(const DLTensor *view, uint64_t flags,
                                                                         wdl_release_fn data_release, void *ctx) {
  if (view == NULL) {
    wdl__fail(WDL_NULL_POINTER, "view is NULL", "view", "a DLTensor address", NULL);
    return NULL;
  }
  return create(view, flags, data_release, ctx);
}

WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create_borrowed(const DLTensor *view) {
  return wdl_managed_tensor_create_from_view(view, 0, NULL, NULL);
}

WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_create(DLDevice device, DLDataType dtype, int32_t ndim,
                                                               const int64_t *shape, const int64_t *strides, void *data,
                                                               uint64_t byte_offset, uint64_t flags,
                                                               wdl_release_fn data_release, void *ctx) {
  DLTensor view;
  view.data = data;
  view.device = device;
  view.ndim = ndim;
  view.dtype = dtype;
  view.shape = (int64_t *)shape;
  view.strides = (int64_t *)strides;
  view.byte_offset = byte_offset;
  return create(&view, flags, data_release, ctx);
}

WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu(DLDataType dtype, int32_t ndim,
                                                                  const int64_t *shape) {
  DLTensor view;
  memset(&view, 0, sizeof view);
  view.device.device_type = kDLCPU;
  view.device.device_id = 0;
  view.ndim = ndim;
  view.dtype = dtype;
  view.shape = (int64_t *)shape;
  uint64_t nbytes = 0;
  if (wdl_tensor_nbytes(&view, &nbytes) != 0) return NULL;
  if (nbytes > (uint64_t)(SIZE_MAX - WDL_CPU_ALIGNMENT)) {
    wdl__fail(WDL_OUT_OF_MEMORY, "tensor larger than the address space", "shape", "a byte size that fits size_t",
              "%" PRIu64 " bytes", nbytes);
    return NULL;
  }
  size_t alloc = ((size_t)nbytes + (WDL_CPU_ALIGNMENT - 1u)) & ~(size_t)(WDL_CPU_ALIGNMENT - 1u);
  void *data = NULL;
  if (alloc > 0) {
    data = aligned_alloc(WDL_CPU_ALIGNMENT, alloc);
    if (data == NULL) {
      wdl__fail(WDL_OUT_OF_MEMORY, "allocation of tensor data failed", "shape", "memory for the data",
                "%" PRIu64 " bytes", nbytes);
      return NULL;
    }
    memset(data, 0, alloc);
  }
  view.data = data;
  DLManagedTensorVersioned *t = create(&view, 0, data != NULL ? free_owned_data : NULL, data);
  if (t == NULL) free(data);
  return t;
}

WDL_EXPORT DLManagedTensorVersioned *wdl_managed_tensor_alloc_cpu_p(const DLDataType *dtype, int32_t ndim,
                                                                    const int64_t *shape) {
  if (dtype == NULL) {
    wdl__fail(WDL_NULL_POINTER, "dtype is NULL", "dtype", "a DLDataType address", NULL);
    return NULL;
  }
  return wdl_managed_tensor_alloc_cpu(*dtype, ndim, shape);
}

WDL_EXPORT int wdl_managed_tensor_release(DLManagedTensorVersioned *t) {
  if (t == NULL || t->deleter == NULL) return 0;
  t->deleter(t);
  return 0;
}

WDL_EXPORT uint32_t wdl_managed_tensor_live_count(void) { return g_live_blocks; }
