/*
 * test_validation_rules.c — wdl_managed_tensor_validate / wdl_tensor_validate
 * against every case of spec/validation-rules.json (the one rule set the JS
 * codec and Python are tested against too). The table is turned into C by
 * scripts/gen_validation_rules_c.py at build time (build/generated/).
 * Cases marked for JS/Python only (pointer placement) are counted, not run.
 */
#include <stdio.h>

#include "harness.h"
#include "webdlpack/webdlpack.h"

typedef struct {
  const char *name;
  int applies; /* 0: the case is about pointers C takes as given */
  int legacy;  /* validate the bare DLTensor (legacy struct has no version/flags) */
  uint32_t major, minor;
  uint64_t flags;
  uint64_t data;
  int32_t device_type, device_id, ndim;
  uint8_t code, bits;
  uint16_t lanes;
  const int64_t *shape, *strides;
  uint64_t byte_offset;
  int expect_code; /* WDL_OK: valid */
  const char *field;
  int64_t nbytes; /* -1: not stated */
} wdl_rule_case;

#include "validation_rules.inc"

/* 0 when the case gives the expected outcome; else prints why and returns 1. */
static int run_rule(const wdl_rule_case *r) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = r->major;
  m.version.minor = r->minor;
  m.flags = r->flags;
  DLTensor *t = &m.dl_tensor;
  t->data = (void *)(uintptr_t)r->data;
  t->device.device_type = (DLDeviceType)r->device_type;
  t->device.device_id = r->device_id;
  t->ndim = r->ndim;
  t->dtype.code = r->code;
  t->dtype.bits = r->bits;
  t->dtype.lanes = r->lanes;
  t->shape = (int64_t *)r->shape;
  t->strides = (int64_t *)r->strides;
  t->byte_offset = r->byte_offset;
  wdl_clear_error();
  int rc = r->legacy ? wdl_tensor_validate(t, WDL_RULES_MEMORY_SIZE)
                     : wdl_managed_tensor_validate(&m, WDL_RULES_MEMORY_SIZE);
  if (r->expect_code == WDL_OK) {
    if (rc != 0) {
      fprintf(stderr, "  rule %s: expected valid, got %s\n", r->name, wdl_last_error_message());
      return 1;
    }
    /* wdl_tensor_nbytes sees a bare DLTensor (no flags): padded sizes are checked by JS/Python only. */
    uint64_t n = 0;
    if (r->nbytes >= 0 && !(r->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) &&
        (wdl_tensor_nbytes(t, &n) != 0 || n != (uint64_t)r->nbytes)) {
      fprintf(stderr, "  rule %s: nbytes %llu, expected %lld\n", r->name, (unsigned long long)n, (long long)r->nbytes);
      return 1;
    }
    return 0;
  }
  char want[96];
  snprintf(want, sizeof want, "field %s;", r->field);
  const char *msg = wdl_last_error_message();
  if (rc != -1 || wdl_last_error_code() != r->expect_code || strstr(msg, want) == NULL) {
    fprintf(stderr, "  rule %s: expected %s (%s), got rc %d: %s\n", r->name, wdl_error_name(r->expect_code), want, rc,
            rc == 0 ? "(valid)" : msg);
    return 1;
  }
  return 0;
}

/* Registered in test_validate.c's case list. */
void wdl_validation_rules_every_case(void);
void wdl_validation_rules_every_case(void) {
  int mismatches = 0, ran = 0;
  for (size_t i = 0; i < WDL_COUNT_OF(k_rule_cases); i++) {
    if (!k_rule_cases[i].applies) continue;
    ran++;
    mismatches += run_rule(&k_rule_cases[i]);
  }
  CHECK(ran >= 60); /* the table's C cases ran (not just the JS/Python-only ones) */
  CHECK_EQ_INT(mismatches, 0);
}
