/*
 * validate.c — DLTensor / DLManagedTensorVersioned checks, the same rules the
 * JS codec applies, each failure naming the field, the value and the rule.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"

/** Extent of a tensor's elements relative to data + byte_offset, in elements. */
typedef struct {
  uint64_t count;  /* number of elements */
  int64_t min_off; /* lowest element offset (<= 0 with negative strides) */
  int64_t max_off; /* highest element offset */
  uint64_t elem_bits;
} wdl_span;

static const uint32_t k_known_flags =
    (uint32_t)(DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED |
               DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);

static int device_type_known(int32_t t) {
  switch (t) {
    case kDLCPU: case kDLCUDA: case kDLCUDAHost: case kDLOpenCL: case kDLVulkan: case kDLMetal:
    case kDLVPI: case kDLROCM: case kDLROCMHost: case kDLExtDev: case kDLCUDAManaged: case kDLOneAPI:
    case kDLWebGPU: case kDLHexagon: case kDLMAIA: case kDLTrn:
      return 1;
    default:
      return 0;
  }
}

static int bits_ok(uint8_t code, uint8_t bits, const char **rule) {
  switch (code) {
    case kDLInt:
    case kDLUInt:
      *rule = "bits in {8, 16, 32, 64} for int/uint";
      return bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case kDLFloat:
      *rule = "bits in {16, 32, 64} for float";
      return bits == 16 || bits == 32 || bits == 64;
    case kDLOpaqueHandle:
      *rule = "bits a nonzero multiple of 8 for opaque handle";
      return bits != 0 && bits % 8 == 0;
    case kDLBfloat:
      *rule = "bits == 16 for bfloat";
      return bits == 16;
    case kDLComplex:
      *rule = "bits in {32, 64, 128} for complex";
      return bits == 32 || bits == 64 || bits == 128;
    case kDLBool:
      *rule = "bits == 8 for bool";
      return bits == 8;
    case kDLFloat6_e2m3fn:
    case kDLFloat6_e3m2fn:
      *rule = "bits == 6 for fp6 types";
      return bits == 6;
    case kDLFloat4_e2m1fn:
      *rule = "bits == 4 for fp4";
      return bits == 4;
    default: /* the fp8 family, 7..14 */
      *rule = "bits == 8 for fp8 types";
      return bits == 8;
  }
}

static int check_dtype(DLDataType dt) {
  if (dt.code > kDLFloat4_e2m1fn) {
    return wdl__fail(WDL_BAD_DTYPE, "unknown dtype code", "DLTensor.dtype.code", "a DLDataTypeCode (0..17)",
                     "%u", (unsigned)dt.code);
  }
  const char *rule = "";
  if (!bits_ok(dt.code, dt.bits, &rule)) {
    return wdl__fail(WDL_BAD_DTYPE, "bits not allowed for this dtype code", "DLTensor.dtype.bits", rule,
                     "%u (code %u)", (unsigned)dt.bits, (unsigned)dt.code);
  }
  if (dt.lanes == 0) {
    return wdl__fail(WDL_BAD_DTYPE, "lanes must be positive", "DLTensor.dtype.lanes", "lanes >= 1", "%u",
                     (unsigned)dt.lanes);
  }
  if (dt.bits < 8 && dt.lanes != 1) {
    return wdl__fail(WDL_BAD_DTYPE, "sub-byte dtypes cannot have lanes", "DLTensor.dtype.lanes",
                     "lanes == 1 when bits < 8", "%u", (unsigned)dt.lanes);
  }
  return 0;
}

uint64_t wdl__element_bits(DLDataType dtype) { return (uint64_t)dtype.bits * (uint64_t)dtype.lanes; }

/* Structure checks (everything except data and memory range); fills *span. */
static int check_structure(const DLTensor *t, wdl_span *span) {
  if (t == NULL) return wdl__fail(WDL_NULL_POINTER, "tensor is NULL", "DLTensor", "a DLTensor address", NULL);
  if (t->ndim < 0 || t->ndim > WDL_MAX_NDIM) {
    return wdl__fail(WDL_BAD_NDIM, "ndim out of range", "DLTensor.ndim", "0 <= ndim <= 32", "%" PRId32, t->ndim);
  }
  if (t->ndim > 0 && t->shape == NULL) {
    return wdl__fail(WDL_NULL_POINTER, "shape is NULL", "DLTensor.shape", "ndim extents when ndim > 0", "NULL (ndim %" PRId32 ")",
                     t->ndim);
  }
  char field[48];
  uint64_t count = 1;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) {
      snprintf(field, sizeof field, "DLTensor.shape[%" PRId32 "]", i);
      return wdl__fail(WDL_BAD_SHAPE, "negative extent", field, "extent >= 0", "%" PRId64, t->shape[i]);
    }
  }
  int zero = 0;
  for (int32_t i = 0; i < t->ndim; i++) zero |= t->shape[i] == 0;
  if (zero) {
    count = 0;
  } else {
    for (int32_t i = 0; i < t->ndim; i++) {
      if (__builtin_mul_overflow(count, (uint64_t)t->shape[i], &count)) {
        snprintf(field, sizeof field, "DLTensor.shape[%" PRId32 "]", i);
        return wdl__fail(WDL_SIZE_OVERFLOW, "element count overflows 64 bits", field,
                         "a product of extents below 2^64", "%" PRId64, t->shape[i]);
      }
    }
  }
  if (check_dtype(t->dtype) != 0) return -1;
  if (!device_type_known(t->device.device_type)) {
    return wdl__fail(WDL_BAD_DEVICE, "unknown device type", "DLTensor.device.device_type", "a DLDeviceType",
                     "%" PRId32, t->device.device_type);
  }
  if (t->device.device_id < 0) {
    return wdl__fail(WDL_BAD_DEVICE, "negative device id", "DLTensor.device.device_id", "device_id >= 0",
                     "%" PRId32, t->device.device_id);
  }
  uint64_t elem_bits = wdl__element_bits(t->dtype);
  uint64_t total_bits;
  if (__builtin_mul_overflow(count, elem_bits, &total_bits) || total_bits > INT64_MAX) {
    return wdl__fail(WDL_SIZE_OVERFLOW, "byte size overflows", "DLTensor.shape",
                     "element count * bits * lanes below 2^63 bits", "%" PRIu64 " elements of %" PRIu64 " bits",
                     count, elem_bits);
  }
  int64_t min_off = 0, max_off = count == 0 ? 0 : (int64_t)(count - 1);
  if (t->strides != NULL && count > 0) {
    min_off = 0;
    max_off = 0;
    for (int32_t i = 0; i < t->ndim; i++) {
      int64_t reach;
      int bad = __builtin_mul_overflow(t->shape[i] - 1, t->strides[i], &reach);
      if (!bad) bad = reach < 0 ? __builtin_add_overflow(min_off, reach, &min_off)
                                : __builtin_add_overflow(max_off, reach, &max_off);
      if (bad) {
        snprintf(field, sizeof field, "DLTensor.strides[%" PRId32 "]", i);
        return wdl__fail(WDL_BAD_STRIDES, "element offsets overflow 64 bits", field,
                         "(extent - 1) * stride summed over dims within int64", "%" PRId64, t->strides[i]);
      }
    }
    /* The span in bits must also fit, so byte arithmetic below cannot overflow. */
    int64_t lo_bits, hi_bits;
    if (max_off == INT64_MAX || __builtin_mul_overflow(min_off, (int64_t)elem_bits, &lo_bits) ||
        __builtin_mul_overflow(max_off + 1, (int64_t)elem_bits, &hi_bits)) {
      return wdl__fail(WDL_BAD_STRIDES, "strided extent overflows 64-bit bit offsets", "DLTensor.strides",
                       "strides whose reach * element bits fits int64", "min offset %" PRId64 ", max offset %" PRId64,
                       min_off, max_off);
    }
  }
  span->count = count;
  span->min_off = min_off;
  span->max_off = max_off;
  span->elem_bits = elem_bits;
  return 0;
}

static int64_t floor_div8(int64_t v) { return v / 8 - (v % 8 < 0); }
static int64_t ceil_div8(int64_t v) { return v / 8 + (v % 8 > 0); }

WDL_EXPORT int wdl_tensor_validate(const DLTensor *t, uint64_t memory_size) {
  wdl_span span;
  if (check_structure(t, &span) != 0) return -1;
  if (span.count == 0) return 0;
  if (t->data == NULL) {
    return wdl__fail(WDL_NULL_POINTER, "data is NULL for a non-empty tensor", "DLTensor.data",
                     "a non-NULL address when the tensor has elements", "NULL (%" PRIu64 " elements)", span.count);
  }
  if (memory_size == 0 || t->device.device_type != kDLCPU) return 0;
  uint64_t base;
  if (__builtin_add_overflow((uint64_t)(uintptr_t)t->data, t->byte_offset, &base)) {
    return wdl__fail(WDL_OUT_OF_BOUNDS, "data + byte_offset overflows", "DLTensor.byte_offset",
                     "data + byte_offset within memory", "%" PRIu64, t->byte_offset);
  }
  int64_t lo_rel = floor_div8(span.min_off * (int64_t)span.elem_bits);
  int64_t hi_rel = ceil_div8((span.max_off + 1) * (int64_t)span.elem_bits);
  if (lo_rel < 0 && (uint64_t)(-lo_rel) > base) {
    return wdl__fail(WDL_OUT_OF_BOUNDS, "negative strides reach below address 0", "DLTensor.strides",
                     "every element address >= 0", "lowest byte %" PRId64 " from data + byte_offset 0x%" PRIx64,
                     lo_rel, base);
  }
  uint64_t end;
  if (__builtin_add_overflow(base, (uint64_t)hi_rel, &end) || end > memory_size) {
    return wdl__fail(WDL_OUT_OF_BOUNDS, "tensor bytes end past linear memory", "DLTensor.data",
                     "data + byte_offset + extent <= memory size",
                     "data 0x%" PRIx64 " + byte_offset %" PRIu64 " + %" PRId64 " bytes > memory size %" PRIu64,
                     (uint64_t)(uintptr_t)t->data, t->byte_offset, hi_rel, memory_size);
  }
  return 0;
}

WDL_EXPORT int wdl_managed_tensor_validate(const DLManagedTensorVersioned *t, uint64_t memory_size) {
  if (t == NULL) {
    return wdl__fail(WDL_NULL_POINTER, "managed tensor is NULL", "DLManagedTensorVersioned",
                     "a DLManagedTensorVersioned address", NULL);
  }
  if (t->version.major != WDL_DLPACK_MAJOR_VERSION) {
    return wdl__fail(WDL_VERSION_MISMATCH, "unsupported DLPack major version", "DLManagedTensorVersioned.version.major",
                     "1", "%" PRIu32 ".%" PRIu32, t->version.major, t->version.minor);
  }
  if ((t->flags & ~(uint64_t)k_known_flags) != 0) {
    return wdl__fail(WDL_BAD_FLAGS, "unknown flag bits", "DLManagedTensorVersioned.flags",
                     "only READ_ONLY | IS_COPIED | IS_SUBBYTE_TYPE_PADDED (bits 0..2)", "0x%" PRIx64, t->flags);
  }
  return wdl_tensor_validate(&t->dl_tensor, memory_size);
}

int wdl__byte_span(const DLTensor *t, int64_t *lo, int64_t *hi, uint64_t *count) {
  wdl_span span;
  if (check_structure(t, &span) != 0) return -1;
  *count = span.count;
  if (span.count == 0) {
    *lo = 0;
    *hi = 0;
    return 0;
  }
  /* Both products fit int64 (checked in check_structure). */
  *lo = floor_div8(span.min_off * (int64_t)span.elem_bits);
  *hi = ceil_div8((span.max_off + 1) * (int64_t)span.elem_bits);
  return 0;
}

WDL_EXPORT int wdl_tensor_nbytes(const DLTensor *t, uint64_t *out) {
  if (out == NULL) return wdl__fail(WDL_NULL_POINTER, "out is NULL", "out", "a uint64_t address", NULL);
  int64_t lo, hi;
  uint64_t count;
  if (wdl__byte_span(t, &lo, &hi, &count) != 0) return -1;
  *out = (uint64_t)hi + (uint64_t)(-lo);
  return 0;
}

WDL_EXPORT uint64_t wdl_memory_size(void) {
#if defined(__wasm__)
  return (uint64_t)__builtin_wasm_memory_size(0) * 65536u;
#else
  return 0;
#endif
}

uint64_t wdl__default_memory_size(void) { return wdl_memory_size(); }
