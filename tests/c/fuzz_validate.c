/*
 * fuzz_validate.c — random DLManagedTensorVersioned structs through
 * wdl_managed_tensor_validate. Each must give 0, or -1 with a known error code
 * and a message naming a field; an accepted CPU tensor must lie inside the
 * memory, checked here with 128-bit arithmetic independently of the validator.
 * Short mode: validate.fuzz_short in tests/c/test_validate.c (make test-c). Long mode: tests/c/fuzz/main.c
 * (make fuzz, under ASan/UBSan like the tests).
 */
#include "fuzz_validate.h"

#include <stdio.h>
#include <time.h>

#include <string.h>

#include "webdlpack/webdlpack.h"

static uint64_t g_state;

static uint64_t next(void) { /* xorshift64* */
  g_state ^= g_state >> 12;
  g_state ^= g_state << 25;
  g_state ^= g_state >> 27;
  return g_state * UINT64_C(2685821657736338717);
}

static uint64_t pick(const uint64_t *values, size_t n) { return values[next() % n]; }

#define PICK(arr) pick((arr), sizeof(arr) / sizeof((arr)[0]))

static const uint64_t k_memory[] = {0, 65536, 65536, 1u << 24, UINT64_C(1) << 32};
static const uint64_t k_extent[] = {0,
                                    1,
                                    1,
                                    2,
                                    3,
                                    5,
                                    7,
                                    64,
                                    1000,
                                    UINT64_C(1) << 31,
                                    (UINT64_C(1) << 53) - 1,
                                    UINT64_C(1) << 53,
                                    UINT64_C(1) << 62,
                                    (uint64_t)INT64_MAX,
                                    (uint64_t)-1};
static const uint64_t k_stride[] = {0,
                                    1,
                                    1,
                                    2,
                                    3,
                                    (uint64_t)-1,
                                    (uint64_t)-3,
                                    1000,
                                    UINT64_C(1) << 40,
                                    (UINT64_C(1) << 53) - 1,
                                    UINT64_C(1) << 53,
                                    (uint64_t)INT64_MAX,
                                    (uint64_t)INT64_MIN};
static const uint64_t k_bits[] = {0, 1, 2, 3, 4, 6, 8, 8, 12, 16, 16, 24, 32, 32, 64, 128, 255};
static const uint64_t k_lanes[] = {0, 1, 1, 1, 2, 3, 4, 16, 65535};
static const uint64_t k_offset[] = {0,           0, 0, 4, 12, 4096, 65536, (UINT64_C(1) << 53) - 1, UINT64_C(1) << 53,
                                    (uint64_t)-8};

/* A value from `table`, or (one time in four) a random one. */
static uint64_t value(const uint64_t *table, size_t n) { return next() % 4 == 0 ? next() : pick(table, n); }
#define VALUE(arr) value((arr), sizeof(arr) / sizeof((arr)[0]))

typedef __int128 i128;

/* 1 when every byte the accepted tensor reaches is inside [0, memory_size). */
static int inside_memory(const DLTensor *t, int padded, uint64_t memory_size) {
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] == 0) return 1; /* empty: no byte is reached (the other extents may be huge) */
  }
  i128 count = 1;
  for (int i = 0; i < t->ndim; i++) count *= t->shape[i]; /* accepted: each extent and the count <= 2^53 */
  i128 lo = 0, hi = count - 1;
  if (t->strides != NULL) {
    hi = 0;
    for (int i = 0; i < t->ndim; i++) {
      i128 reach = (i128)(t->shape[i] - 1) * t->strides[i];
      if (reach < 0)
        lo += reach;
      else
        hi += reach;
    }
  }
  i128 bits = (i128)t->dtype.bits * t->dtype.lanes, lo_b, hi_b;
  if (bits % 8 != 0 && !padded) {
    lo_b = lo * bits / 8 - ((lo * bits) % 8 < 0);
    hi_b = ((hi + 1) * bits + 7) / 8;
  } else {
    i128 item = (bits + 7) / 8;
    lo_b = lo * item;
    hi_b = (hi + 1) * item;
  }
  i128 base = (i128)(uintptr_t)t->data + t->byte_offset;
  return base + lo_b >= 0 && base + hi_b <= (i128)memory_size;
}

int wdl_fuzz_validate(uint64_t seed, uint64_t max_cases, double seconds, wdl_fuzz_stats *out) {
  g_state = seed | 1;
  memset(out, 0, sizeof *out);
  int64_t shape[40], strides[40];
  struct timespec t0, now;
  timespec_get(&t0, TIME_UTC);
  for (uint64_t n = 0; max_cases == 0 || n < max_cases; n++) {
    if (seconds > 0 && (n & 1023) == 0) { /* wall time, like the JS and Python fuzzers */
      timespec_get(&now, TIME_UTC);
      if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >= seconds) break;
    }
    DLManagedTensorVersioned m;
    memset(&m, 0, sizeof m);
    uint64_t memory_size = PICK(k_memory);
    m.version.major = next() % 8 == 0 ? (uint32_t)next() % 3 : 1;
    m.version.minor = (uint32_t)next() % 4;
    m.flags = next() % 8 == 0 ? next() >> (next() % 64) : next() % 8;
    DLTensor *t = &m.dl_tensor;
    int r = (int)(next() % 16);
    t->ndim = r < 12   ? (int32_t)(next() % 5)
              : r < 14 ? 32 + (int32_t)(next() % 2) - (int32_t)(next() % 2)
                       : (int32_t)next();
    int ndim_cap = t->ndim >= 0 && t->ndim <= 40 ? t->ndim : 0;
    for (int i = 0; i < 40; i++)
      shape[i] = (int64_t)(i < ndim_cap && next() % 3 == 0 ? VALUE(k_extent) : 1 + next() % 4);
    t->shape = next() % 32 == 0 ? NULL : shape;
    int contiguous_strides = next() % 2;
    uint64_t step = 1; /* row-major strides of the small extents (wraps harmlessly past 2^64) */
    for (int i = 39; i >= 0; i--) {
      strides[i] = contiguous_strides && next() % 4 ? (int64_t)step : (int64_t)VALUE(k_stride);
      step *= (uint64_t)(shape[i] > 0 && shape[i] < 8 ? shape[i] : 1);
    }
    t->strides = next() % 2 ? NULL : strides;
    t->dtype.code = (uint8_t)(next() % 8 == 0 ? next() : next() % 18);
    t->dtype.bits = (uint8_t)VALUE(k_bits);
    t->dtype.lanes = (uint16_t)VALUE(k_lanes);
    t->device.device_type = (DLDeviceType)(next() % 8 == 0   ? (int32_t)next()
                                           : next() % 4 == 0 ? (int32_t)(next() % 20)
                                                             : kDLCPU);
    t->device.device_id = next() % 8 == 0 ? (int32_t)next() : 0;
    uint64_t where = next() % 6;
    uint64_t data = where == 0                  ? 0
                    : where == 1 && memory_size ? memory_size - next() % 64
                    : where == 2                ? next()
                                                : next() % 65536;
    t->data = (void *)(uintptr_t)data;
    t->byte_offset = VALUE(k_offset);
    wdl_clear_error();
    int rc = wdl_managed_tensor_validate(&m, memory_size);
    out->cases++;
    if (rc == 0) {
      out->accepted++;
      int padded = (m.flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
      int ok = t->ndim >= 0 && t->ndim <= 32 && m.version.major == 1 && (m.flags >> 3) == 0 && t->dtype.lanes >= 1;
      if (ok && t->device.device_type == kDLCPU && memory_size != 0) ok = inside_memory(t, padded, memory_size);
      if (!ok) {
        out->bad++;
        fprintf(stderr, "fuzz: accepted a bad struct (seed %llu, case %llu)\n", (unsigned long long)seed,
                (unsigned long long)n);
      }
    } else {
      out->refused++;
      int code = wdl_last_error_code();
      if (rc != -1 || code <= WDL_OK || code > WDL_GPU_ERROR || strstr(wdl_last_error_message(), "field ") == NULL) {
        out->bad++;
        fprintf(stderr, "fuzz: rc %d, code %d, message %s\n", rc, code, wdl_last_error_message());
      }
    }
  }
  return out->bad == 0 ? 0 : -1;
}
