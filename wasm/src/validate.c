/*
 * validate.c — DLTensor / DLManagedTensorVersioned checks, the same rules the
 * JS codec applies, each failure naming the field, the value and the rule.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"

/*
 * The rules are spec/validation-rules.json (tests/c/test_validation_rules.c
 * runs every case; the JS codec and Python run the same table). Every size,
 * offset and stride stays at most 2^53 - 1 — the range the JS codec can hold
 * exactly — so all three agree on every struct.
 */
#define WDL_SAFE_MAX INT64_C(9007199254740991) /* 2^53 - 1 */

/** Where a tensor's bytes are, relative to data + byte_offset. */
typedef struct {
  uint64_t count;  /* number of elements */
  int64_t lo_byte; /* lowest byte any element touches (<= 0 with negative strides) */
  int64_t hi_byte; /* one past the highest byte */
  int64_t nbytes;  /* contiguous storage size (packed for sub-byte elements unless padded) */
} wdl_span;

static const uint32_t k_known_flags = (uint32_t)(DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED |
                                                 DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);

static int device_type_known(int32_t t) {
  switch (t) {
    case kDLCPU:
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLOpenCL:
    case kDLVulkan:
    case kDLMetal:
    case kDLVPI:
    case kDLROCM:
    case kDLROCMHost:
    case kDLExtDev:
    case kDLCUDAManaged:
    case kDLOneAPI:
    case kDLWebGPU:
    case kDLHexagon:
    case kDLMAIA:
    case kDLTrn:
      return 1;
    default:
      return 0;
  }
}

static int bits_ok(uint8_t code, uint8_t bits, const char **rule) {
  switch (code) {
    case kDLInt:
    case kDLUInt:
      *rule = "bits in {1, 2, 4, 8, 16, 32, 64} for int/uint";
      return bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case kDLFloat:
      *rule = "bits in {16, 32, 64} for float";
      return bits == 16 || bits == 32 || bits == 64;
    case kDLOpaqueHandle:
      *rule = "bits in {8, 16, 32, 64} for opaque handle";
      return bits == 8 || bits == 16 || bits == 32 || bits == 64;
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

/* Sub-byte dtypes (int4, uint1, fp4, fp6, ...) may have lanes: an element is bits * lanes bits. */
static int check_dtype(DLDataType dt) {
  if (dt.code > kDLFloat4_e2m1fn) {
    return wdl__fail(WDL_BAD_DTYPE, "unknown dtype code", "DLTensor.dtype.code", "a DLDataTypeCode (0..17)", "%u",
                     (unsigned)dt.code);
  }
  const char *rule = "";
  if (!bits_ok(dt.code, dt.bits, &rule)) {
    return wdl__fail(WDL_BAD_DTYPE, "bits not allowed for this dtype code", "DLTensor.dtype.bits", rule, "%u (code %u)",
                     (unsigned)dt.bits, (unsigned)dt.code);
  }
  if (dt.lanes == 0) {
    return wdl__fail(WDL_BAD_DTYPE, "lanes must be positive", "DLTensor.dtype.lanes", "1 <= lanes <= 65535", "%u",
                     (unsigned)dt.lanes);
  }
  return 0;
}

uint64_t wdl__element_bits(DLDataType dtype) { return (uint64_t)dtype.bits * (uint64_t)dtype.lanes; }

static int check_device(DLDevice d) {
  if (!device_type_known(d.device_type)) {
    return wdl__fail(WDL_BAD_DEVICE, "unknown device type", "DLTensor.device.device_type", "a DLDeviceType", "%" PRId32,
                     d.device_type);
  }
  if (d.device_id < 0 || (d.device_type == kDLCPU && d.device_id != 0)) {
    return wdl__fail(WDL_BAD_DEVICE, "bad device id", "DLTensor.device.device_id",
                     d.device_type == kDLCPU ? "0 (one CPU: the wasm memory)" : "device_id >= 0", "%" PRId32,
                     d.device_id);
  }
  return 0;
}

/* a * b into *out when it stays within +-(2^53 - 1); else nonzero (*out untouched). On wasm32 an overflow-checked
 * int64 multiply is a call to compiler-rt's 128-bit __multi3: five of them were most of a validation's time. Here
 * the magnitudes decide: both below 2^26, the product is below 2^52; else one unsigned division says whether
 * |a| * |b| exceeds the limit (then no int64 product is formed). */
static int safe_mul(int64_t a, int64_t b, int64_t *out) {
  uint64_t ua = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
  uint64_t ub = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  if (((ua | ub) >> 26) != 0 && ua != 0 && ub > (uint64_t)WDL_SAFE_MAX / ua) return 1;
  *out = (int64_t)(ua * ub) * ((a < 0) != (b < 0) ? -1 : 1);
  return 0;
}

static int64_t floor_div8(int64_t v) { return v / 8 - (v % 8 < 0); }
static int64_t ceil_div8(int64_t v) { return v / 8 + (v % 8 > 0); }

static int size_overflow(const char *what, const char *field, int64_t value) {
  return wdl__fail(WDL_SIZE_OVERFLOW, what, field, "at most 2^53 - 1", "%" PRId64, value);
}

/** Capacity of a field name such as "DLTensor.strides[31]". */
#define WDL_FIELD_CAP 48

/* "DLTensor.<array>[i]" written into buf, for an error naming one entry: formatted only on failure. */
static const char *entry_field(char buf[WDL_FIELD_CAP], const char *array, int32_t i) {
  snprintf(buf, WDL_FIELD_CAP, "DLTensor.%s[%" PRId32 "]", array, i);
  return buf;
}

/* Structure checks (everything except data and the memory range); fills *span. */
static int check_structure(const DLTensor *t, int padded, wdl_span *span) {
  if (t == NULL) return wdl__fail(WDL_NULL_POINTER, "tensor is NULL", "DLTensor", "a DLTensor address", NULL);
  if (t->ndim < 0 || t->ndim > WDL_MAX_NDIM) {
    return wdl__fail(WDL_BAD_NDIM, "ndim out of range", "DLTensor.ndim", "0 <= ndim <= 32", "%" PRId32, t->ndim);
  }
  if (t->ndim > 0 && t->shape == NULL) {
    return wdl__fail(WDL_NULL_POINTER, "shape is NULL", "DLTensor.shape", "ndim extents when ndim > 0",
                     "NULL (ndim %" PRId32 ")", t->ndim);
  }
  char field[WDL_FIELD_CAP];
  int zero = 0;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) {
      return wdl__fail(WDL_BAD_SHAPE, "negative extent", entry_field(field, "shape", i), "extent >= 0", "%" PRId64,
                       t->shape[i]);
    }
    if (t->shape[i] > WDL_SAFE_MAX)
      return size_overflow("extent too large", entry_field(field, "shape", i), t->shape[i]);
    zero |= t->shape[i] == 0;
  }
  const int64_t *strides = t->ndim > 0 ? t->strides : NULL;
  for (int32_t i = 0; strides != NULL && i < t->ndim; i++) {
    if (strides[i] > WDL_SAFE_MAX || strides[i] < -WDL_SAFE_MAX) {
      return wdl__fail(WDL_BAD_STRIDES, "stride too large", entry_field(field, "strides", i), "|stride| <= 2^53 - 1",
                       "%" PRId64, strides[i]);
    }
  }
  if (t->byte_offset > (uint64_t)WDL_SAFE_MAX) {
    return wdl__fail(WDL_SIZE_OVERFLOW, "byte_offset too large", "DLTensor.byte_offset", "at most 2^53 - 1", "%" PRIu64,
                     t->byte_offset);
  }
  if (check_device(t->device) != 0 || check_dtype(t->dtype) != 0) return -1;
  int64_t count = 1;
  for (int32_t i = 0; i < t->ndim && !zero; i++) {
    if (safe_mul(count, t->shape[i], &count)) {
      return size_overflow("element count too large (at the extent given as value)", "DLTensor.shape", t->shape[i]);
    }
  }
  if (zero) count = 0;
  int64_t elem_bits = (int64_t)wdl__element_bits(t->dtype);
  int packed = elem_bits % 8 != 0 && !padded;
  int64_t unit = packed ? elem_bits : (elem_bits + 7) / 8; /* bits per element when packed, else bytes */
  int64_t total;
  if (safe_mul(count, unit, &total)) return size_overflow("tensor size too large", "DLTensor.shape", count);
  span->count = (uint64_t)count;
  span->nbytes = packed ? ceil_div8(total) : total;
  span->lo_byte = span->hi_byte = 0;
  if (count == 0) return 0;
  int64_t lo = 0, hi = count - 1, expected = 1;
  int contiguous = 1;
  if (strides != NULL) {
    hi = 0;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
      int64_t reach;
      if (safe_mul(t->shape[i] - 1, strides[i], &reach)) {
        return size_overflow("(extent - 1) * stride too large", entry_field(field, "strides", i), strides[i]);
      }
      int64_t *end = reach < 0 ? &lo : &hi;
      *end += reach; /* both addends within 2^53: no int64 overflow */
      if (*end > WDL_SAFE_MAX || *end < -WDL_SAFE_MAX)
        return size_overflow("element offsets too large", "DLTensor.strides", *end);
      if (t->shape[i] != 1 && strides[i] != expected) contiguous = 0;
      expected *= t->shape[i]; /* <= count: safe */
    }
  }
  if (packed && !contiguous) {
    return wdl__fail(WDL_BAD_STRIDES, "packed sub-byte tensors must be C-contiguous", "DLTensor.strides",
                     "NULL or row-major strides (or set IS_SUBBYTE_TYPE_PADDED)", "%s", "not row-major");
  }
  int64_t lo_units, hi_units;
  if (safe_mul(lo, unit, &lo_units) || safe_mul(hi + 1, unit, &hi_units)) {
    return size_overflow("byte offsets too large", "DLTensor.strides", hi);
  }
  span->lo_byte = packed ? floor_div8(lo_units) : lo_units;
  span->hi_byte = packed ? ceil_div8(hi_units) : hi_units;
  return 0;
}

static int validate(const DLTensor *t, int padded, uint64_t memory_size) {
  wdl_span span;
  if (check_structure(t, padded, &span) != 0) return -1;
  if (span.count == 0) return 0;
  if (t->data == NULL) {
    return wdl__fail(WDL_NULL_POINTER, "data is NULL for a non-empty tensor", "DLTensor.data",
                     "a non-NULL address when the tensor has elements", "NULL (%" PRIu64 " elements)", span.count);
  }
  if (memory_size == 0 || t->device.device_type != kDLCPU) return 0;
  if ((uint64_t)span.nbytes > memory_size) {
    return wdl__fail(WDL_SIZE_OVERFLOW, "tensor is larger than the whole memory", "DLTensor.shape",
                     "size <= memory size", "%" PRId64 " bytes > memory size %" PRIu64, span.nbytes, memory_size);
  }
  uint64_t data = (uint64_t)(uintptr_t)t->data;
  uint64_t base = data + t->byte_offset; /* both below 2^64 - 2^53: no wrap */
  if (span.lo_byte < 0 && (uint64_t)(-span.lo_byte) > base) {
    return wdl__fail(WDL_OUT_OF_BOUNDS, "negative strides reach below address 0", "DLTensor.strides",
                     "every element address >= 0", "lowest byte %" PRId64 " from data + byte_offset 0x%" PRIx64,
                     span.lo_byte, base);
  }
  if (base + (uint64_t)span.hi_byte > memory_size) {
    int offset_at_fault = data < memory_size && base >= memory_size;
    return wdl__fail(WDL_OUT_OF_BOUNDS, "tensor bytes end past linear memory",
                     offset_at_fault ? "DLTensor.byte_offset" : "DLTensor.data",
                     "data + byte_offset + extent <= memory size",
                     "data 0x%" PRIx64 " + byte_offset %" PRIu64 " + %" PRId64 " bytes > memory size %" PRIu64, data,
                     t->byte_offset, span.hi_byte, memory_size);
  }
  return 0;
}

WDL_EXPORT int wdl_tensor_validate(const DLTensor *t, uint64_t memory_size) { return validate(t, 0, memory_size); }

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
  return validate(&t->dl_tensor, (t->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, memory_size);
}

WDL_EXPORT int wdl_managed_tensor_check(const DLManagedTensorVersioned *t) {
  return wdl_managed_tensor_validate(t, wdl__default_memory_size());
}

int wdl__byte_span(const DLTensor *t, int64_t *lo, int64_t *hi, uint64_t *count) {
  wdl_span span;
  if (check_structure(t, 0, &span) != 0) return -1;
  *count = span.count;
  *lo = span.lo_byte;
  *hi = span.hi_byte;
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
