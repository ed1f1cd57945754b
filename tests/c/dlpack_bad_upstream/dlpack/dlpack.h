/*
 * A deliberately WRONG "upstream" dlpack.h for the negative include-order test
 * (wasm/wasm.mk, test-c-dlpack-compat): it claims DLPack 1.1 under upstream's
 * include guard but puts DLTensor.byte_offset before shape. webdlpack/dlpack.h
 * included after it must refuse to compile, naming the DLTensor layout.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#include <stddef.h>
#include <stdint.h>
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef enum { kDLCPU = 1, kDLWebGPU = 15, kDLTrn = 18 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6, kDLFloat4_e2m1fn = 17 } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  uint64_t byte_offset; /* wrong place */
  int64_t *shape;
  int64_t *strides;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif
