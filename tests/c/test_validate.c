/*
 * test_validate.c — wdl_tensor_validate on a table of malformed DLTensors
 * (each row breaks one rule → one error code and field), on valid edge cases,
 * and wdl_tensor_nbytes / wdl_managed_tensor_validate.
 */
#include "fuzz_validate.h"
#include "harness.h"
#include "webdlpack/webdlpack.h"

#define MEM 0x10000u /* pretend linear memory of 64 KiB */
#define AT(a) ((void *)(uintptr_t)(a))
#define CPU {kDLCPU, 0}
#define GPU {kDLWebGPU, 0}
#define F32 {kDLFloat, 32, 1}
#define DT(c, b, l) {(c), (b), (l)}

static int64_t S23[] = {2, 3};
static int64_t S2NEG[] = {2, -1};
static int64_t S_HUGE[] = {INT64_C(1) << 40, INT64_C(1) << 40};
static int64_t S_BITS_OVF[] = {INT64_C(1) << 61, 1};
static int64_t S4[] = {4};
static int64_t S43[] = {4, 3};
static int64_t S0[] = {0, 5};
static int64_t ST_NEG[] = {-3, 1};
static int64_t ST_OVF[] = {INT64_MAX / 2, 1};

typedef struct {
  const char *name;
  DLTensor t;
  uint64_t memory_size;
  int code;
  const char *field; /* substring the message must contain */
} bad_row;

/* data, device, ndim, dtype, shape, strides, byte_offset */
// One row per case, as wide as the rule table it mirrors:
// clang-format off
static const bad_row k_bad[] = {
    {"ndim_negative", {AT(0x1000), CPU, -1, F32, S23, NULL, 0}, MEM, WDL_BAD_NDIM, "field DLTensor.ndim; value -1"},
    {"ndim_33", {AT(0x1000), CPU, 33, F32, S23, NULL, 0}, MEM, WDL_BAD_NDIM, "field DLTensor.ndim; value 33"},
    {"shape_null", {AT(0x1000), CPU, 2, F32, NULL, NULL, 0}, MEM, WDL_NULL_POINTER, "field DLTensor.shape"},
    {"shape_negative", {AT(0x1000), CPU, 2, F32, S2NEG, NULL, 0}, MEM, WDL_BAD_SHAPE, "field DLTensor.shape[1]; value -1"},
    {"count_overflow", {AT(0x1000), CPU, 2, F32, S_HUGE, NULL, 0}, MEM, WDL_SIZE_OVERFLOW, "field DLTensor.shape;"},
    {"bytes_overflow", {AT(0x1000), CPU, 2, DT(kDLFloat, 64, 1), S_BITS_OVF, NULL, 0}, MEM, WDL_SIZE_OVERFLOW, "field DLTensor.shape"},
    {"dtype_code_unknown", {AT(0x1000), CPU, 2, DT(18, 32, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "field DLTensor.dtype.code; value 18"},
    {"float_bits_8", {AT(0x1000), CPU, 2, DT(kDLFloat, 8, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "field DLTensor.dtype.bits; value 8"},
    {"fp4_bits_8", {AT(0x1000), CPU, 2, DT(kDLFloat4_e2m1fn, 8, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 4 for fp4"},
    {"fp6_bits_8", {AT(0x1000), CPU, 2, DT(kDLFloat6_e2m3fn, 8, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 6 for fp6"},
    {"fp6_e3m2_bits_4", {AT(0x1000), CPU, 2, DT(kDLFloat6_e3m2fn, 4, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 6"},
    {"fp8_bits_16", {AT(0x1000), CPU, 2, DT(kDLFloat8_e4m3fn, 16, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 8 for fp8"},
    {"lanes_zero", {AT(0x1000), CPU, 2, DT(kDLFloat, 32, 0), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "field DLTensor.dtype.lanes; value 0"},
    {"opaque_bits_24", {AT(0x1000), CPU, 2, DT(kDLOpaqueHandle, 24, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "opaque"},
    {"bool_bits_1", {AT(0x1000), CPU, 2, DT(kDLBool, 1, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 8 for bool"},
    {"bfloat_bits_32", {AT(0x1000), CPU, 2, DT(kDLBfloat, 32, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "bits == 16 for bfloat"},
    {"int_bits_12", {AT(0x1000), CPU, 2, DT(kDLInt, 12, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "int/uint"},
    {"complex_bits_16", {AT(0x1000), CPU, 2, DT(kDLComplex, 16, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "complex"},
    {"opaque_bits_12", {AT(0x1000), CPU, 2, DT(kDLOpaqueHandle, 12, 1), S23, NULL, 0}, MEM, WDL_BAD_DTYPE, "opaque"},
    {"device_type_5", {AT(0x1000), {5, 0}, 2, F32, S23, NULL, 0}, MEM, WDL_BAD_DEVICE, "field DLTensor.device.device_type; value 5"},
    {"device_type_0", {AT(0x1000), {0, 0}, 2, F32, S23, NULL, 0}, MEM, WDL_BAD_DEVICE, "value 0"},
    {"device_id_negative", {AT(0x1000), {kDLCPU, -1}, 2, F32, S23, NULL, 0}, MEM, WDL_BAD_DEVICE, "field DLTensor.device.device_id; value -1"},
    {"data_null", {NULL, CPU, 2, F32, S23, NULL, 0}, MEM, WDL_NULL_POINTER, "field DLTensor.data"},
    {"gpu_data_null", {NULL, GPU, 2, F32, S23, NULL, 0}, 0, WDL_NULL_POINTER, "field DLTensor.data"},
    {"past_memory_end", {AT(MEM - 16), CPU, 2, F32, S23, NULL, 0}, MEM, WDL_OUT_OF_BOUNDS, "field DLTensor.data"},
    {"byte_offset_past_end", {AT(0x1000), CPU, 2, F32, S23, NULL, MEM - 0x1000 - 8}, MEM, WDL_OUT_OF_BOUNDS, "memory size 65536"},
    {"byte_offset_wraps", {AT(0x1000), CPU, 2, F32, S23, NULL, UINT64_MAX - 8}, MEM, WDL_SIZE_OVERFLOW, "field DLTensor.byte_offset"},
    {"negative_stride_below_zero", {AT(8), CPU, 2, F32, S23, ST_NEG, 0}, MEM, WDL_OUT_OF_BOUNDS, "field DLTensor.strides"},
    {"stride_overflow", {AT(0x1000), CPU, 2, F32, S43, ST_OVF, 0}, MEM, WDL_BAD_STRIDES, "field DLTensor.strides[0]"},
    {"fp4_one_bit_past_end", {AT(MEM - 1), CPU, 1, DT(kDLFloat4_e2m1fn, 4, 1), S4, NULL, 0}, MEM, WDL_OUT_OF_BOUNDS, "DLTensor.data"},
};

static void run_bad(size_t i) {
  const bad_row *r = &k_bad[i];
  wdl_clear_error();
  CHECK_EQ_INT(wdl_tensor_validate(&r->t, r->memory_size), -1);
  CHECK_EQ_INT(wdl_last_error_code(), r->code);
  CHECK_CONTAINS(wdl_last_error_message(), r->field);
  CHECK_CONTAINS(wdl_last_error_message(), wdl_error_name(r->code));
}

#define BAD(i) static void bad_##i(void) { run_bad(i); }
BAD(0) BAD(1) BAD(2) BAD(3) BAD(4) BAD(5) BAD(6) BAD(7) BAD(8) BAD(9)
BAD(10) BAD(11) BAD(12) BAD(13) BAD(14) BAD(15) BAD(16) BAD(17) BAD(18) BAD(19)
BAD(20) BAD(21) BAD(22) BAD(23) BAD(24) BAD(25) BAD(26) BAD(27) BAD(28) BAD(29)
    // clang-format on

    static void bad_table_complete(void) {
  /* Every row of k_bad has a case below; keep them in step. */
  CHECK_EQ_INT(WDL_COUNT_OF(k_bad), 30);
}

typedef struct {
  const char *name;
  DLTensor t;
  uint64_t memory_size;
  uint64_t nbytes;
} good_row;

static int64_t ST_NEG_OK[] = {-3, 1};
static int64_t ST_BCAST[] = {0, 1};
static int64_t S5[] = {5};

static const good_row k_good[] = {
    {"contiguous_2x3_f32", {AT(0x1000), CPU, 2, F32, S23, NULL, 0}, MEM, 24},
    {"scalar_0d", {AT(0x1000), CPU, 0, F32, NULL, NULL, 0}, MEM, 4},
    {"empty_null_data", {NULL, CPU, 2, F32, S0, NULL, 0}, MEM, 0},
    {"ends_exactly_at_memory_end", {AT(MEM - 24), CPU, 2, F32, S23, NULL, 0}, MEM, 24},
    {"negative_strides_in_range", {AT(0x1000), CPU, 2, F32, S23, ST_NEG_OK, 12}, MEM, 24},
    {"broadcast_zero_stride", {AT(0x1000), CPU, 2, F32, S23, ST_BCAST, 0}, MEM, 12},
    {"fp4_packed_5_elements", {AT(MEM - 3), CPU, 1, DT(kDLFloat4_e2m1fn, 4, 1), S5, NULL, 0}, MEM, 3},
    {"fp6_bits_6", {AT(0x1000), CPU, 1, DT(kDLFloat6_e3m2fn, 6, 1), S4, NULL, 0}, MEM, 3},
    {"float16x4_lanes", {AT(0x1000), CPU, 1, DT(kDLFloat, 16, 4), S4, NULL, 0}, MEM, 32},
    {"webgpu_not_range_checked", {AT(0x80000100u), GPU, 2, F32, S23, NULL, 0}, MEM, 24},
    {"no_memory_size_no_range_check", {AT(0xFFFFF000u), CPU, 2, F32, S23, NULL, 0}, 0, 24},
    {"complex128", {AT(0x1000), CPU, 1, DT(kDLComplex, 128, 1), S4, NULL, 0}, MEM, 64},
};

static void good_rows_pass(void) {
  for (size_t i = 0; i < WDL_COUNT_OF(k_good); i++) {
    const good_row *r = &k_good[i];
    if (wdl_tensor_validate(&r->t, r->memory_size) != 0) {
      wdl_t_fail(__FILE__, __LINE__, "row %s: %s", r->name, wdl_last_error_message());
      return;
    }
    uint64_t n = 0;
    CHECK_EQ_INT(wdl_tensor_nbytes(&r->t, &n), 0);
    if (n != r->nbytes) {
      wdl_t_fail(__FILE__, __LINE__, "row %s: nbytes %llu, expected %llu", r->name, (unsigned long long)n,
                 (unsigned long long)r->nbytes);
      return;
    }
  }
  CHECK_EQ_INT(wdl_last_error_code(), WDL_OK);
}

static void null_tensor(void) {
  CHECK_EQ_INT(wdl_tensor_validate(NULL, 0), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field DLTensor");
  uint64_t n;
  CHECK_EQ_INT(wdl_tensor_nbytes(NULL, &n), -1);
  CHECK_EQ_INT(wdl_tensor_nbytes(&k_good[0].t, NULL), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "field out");
}

static DLManagedTensorVersioned managed_of(const DLTensor *t) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 1;
  m.dl_tensor = *t;
  return m;
}

static void managed_version_major(void) {
  DLManagedTensorVersioned m = managed_of(&k_good[0].t);
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), 0);
  m.version.minor = 7; /* newer minors are fine */
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), 0);
  m.version.major = 2;
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), -1);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "value 2.7");
}

static void managed_unknown_flags(void) {
  DLManagedTensorVersioned m = managed_of(&k_good[0].t);
  m.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), 0);
  m.flags |= UINT64_C(1) << 40;
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), -1);
  CHECK_ERROR(WDL_BAD_FLAGS, "field DLManagedTensorVersioned.flags; value 0x10000000007");
}

static void managed_null_and_inner(void) {
  CHECK_EQ_INT(wdl_managed_tensor_validate(NULL, 0), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "DLManagedTensorVersioned");
  DLManagedTensorVersioned m = managed_of(&k_bad[0].t);
  CHECK_EQ_INT(wdl_managed_tensor_validate(&m, MEM), -1);
  CHECK_ERROR(WDL_BAD_NDIM, "DLTensor.ndim");
}

/* wdl_managed_tensor_check: every rule of wdl_managed_tensor_validate, against wdl_memory_size() (0 natively). */
static void managed_check_is_validate_in_memory(void) {
  DLManagedTensorVersioned m = managed_of(&k_good[0].t);
  CHECK_EQ_INT(wdl_managed_tensor_check(&m), 0);
  m.flags = UINT64_C(1) << 40;
  CHECK_EQ_INT(wdl_managed_tensor_check(&m), -1);
  CHECK_ERROR(WDL_BAD_FLAGS, "field DLManagedTensorVersioned.flags");
  m.flags = 0;
  m.version.major = 2;
  CHECK_EQ_INT(wdl_managed_tensor_check(&m), -1);
  CHECK_ERROR(WDL_VERSION_MISMATCH, "DLManagedTensorVersioned.version.major");
  for (size_t i = 0; i < WDL_COUNT_OF(k_bad); i++) {
    if (k_bad[i].code == WDL_OUT_OF_BOUNDS) continue; /* a bounds case: natively there is no memory size */
    DLManagedTensorVersioned bad = managed_of(&k_bad[i].t);
    CHECK_EQ_INT(wdl_managed_tensor_check(&bad), -1);
    CHECK_EQ_INT(wdl_last_error_code(), k_bad[i].code);
  }
  CHECK_EQ_INT(wdl_managed_tensor_check(NULL), -1);
  CHECK_ERROR(WDL_NULL_POINTER, "DLManagedTensorVersioned");
}

static void memory_size_native_is_zero(void) { CHECK_EQ_U64(wdl_memory_size(), 0); }

/* Every case of spec/validation-rules.json (tests/c/test_validation_rules.c). */
void wdl_validation_rules_every_case(void);
/* Short mode of the validator fuzzer (tests/c/fuzz_validate.c; make fuzz runs it for minutes): 20 000 structs. */
static void fuzz_short(void) {
  wdl_fuzz_stats st;
  CHECK_EQ_INT(wdl_fuzz_validate(UINT64_C(0x5eed), 20000, 0, &st), 0);
  CHECK_EQ_U64(st.cases, 20000);
  CHECK(st.accepted > 100 && st.refused > 100);
}

const wdl_test_case wdl_validate_cases[] = {
    {"validate.bad", "ndim_negative", bad_0},
    {"validate.bad", "ndim_33", bad_1},
    {"validate.bad", "shape_null", bad_2},
    {"validate.bad", "shape_negative", bad_3},
    {"validate.bad", "count_overflow", bad_4},
    {"validate.bad", "bytes_overflow", bad_5},
    {"validate.bad", "dtype_code_unknown", bad_6},
    {"validate.bad", "float_bits_8", bad_7},
    {"validate.bad", "fp4_bits_8", bad_8},
    {"validate.bad", "fp6_bits_8", bad_9},
    {"validate.bad", "fp6_e3m2_bits_4", bad_10},
    {"validate.bad", "fp8_bits_16", bad_11},
    {"validate.bad", "lanes_zero", bad_12},
    {"validate.bad", "opaque_bits_24", bad_13},
    {"validate.bad", "bool_bits_1", bad_14},
    {"validate.bad", "bfloat_bits_32", bad_15},
    {"validate.bad", "int_bits_12", bad_16},
    {"validate.bad", "complex_bits_16", bad_17},
    {"validate.bad", "opaque_bits_12", bad_18},
    {"validate.bad", "device_type_5", bad_19},
    {"validate.bad", "device_type_0", bad_20},
    {"validate.bad", "device_id_negative", bad_21},
    {"validate.bad", "data_null", bad_22},
    {"validate.bad", "gpu_data_null", bad_23},
    {"validate.bad", "past_memory_end", bad_24},
    {"validate.bad", "byte_offset_past_end", bad_25},
    {"validate.bad", "byte_offset_wraps", bad_26},
    {"validate.bad", "negative_stride_below_zero", bad_27},
    {"validate.bad", "stride_overflow", bad_28},
    {"validate.bad", "fp4_one_bit_past_end", bad_29},
    {"validate", "bad_table_complete", bad_table_complete},
    {"validate", "good_rows_pass", good_rows_pass},
    {"validate", "null_tensor", null_tensor},
    {"validate", "managed_version_major", managed_version_major},
    {"validate", "managed_unknown_flags", managed_unknown_flags},
    {"validate", "managed_null_and_inner", managed_null_and_inner},
    {"validate", "memory_size_native_is_zero", memory_size_native_is_zero},
    {"validate", "managed_check_is_validate_in_memory", managed_check_is_validate_in_memory},
    {"validate", "spec_validation_rules", wdl_validation_rules_every_case},
    {"validate", "fuzz_short", fuzz_short},
};
const size_t wdl_validate_count = WDL_COUNT_OF(wdl_validate_cases);
