/*
 * fake_host.c — the fake JS host used by the native tests.
 */
#include "fake_host.h"

#include <stdio.h>
#include <string.h>

#include "harness.h"

#define FAKE_SLOTS 64

fake_host_state fake;

typedef struct {
  uint32_t ptr;
  uint64_t nbytes;
  int32_t device_id;
  uint32_t usage;
} fake_buffer;

static fake_buffer g_buffers[FAKE_SLOTS];
static DLManagedTensorVersioned *g_tensors[FAKE_SLOTS]; /* handle = index + 1 */
static uint32_t g_next_ptr;
static char g_msg[256];
static int g_msg_code;

static int fail(fake_mode mode, const char *what) {
  snprintf(g_msg, sizeof g_msg, "fake host: %s failed", what);
  g_msg_code = mode == FAKE_FAIL_SILENT ? 0 : fake.fail_code;
  if (mode == FAKE_FAIL_SET_ERROR) wdl_set_error(fake.fail_code, g_msg);
  return -1;
}

static uint32_t f_alloc(int32_t device_id, uint32_t lo, uint32_t hi, uint32_t usage) {
  fake.alloc_calls++;
  fake.last_device_id = device_id;
  fake.last_lo = lo;
  fake.last_hi = hi;
  fake.last_usage = usage;
  if (fake.alloc_mode != FAKE_OK) {
    fail(fake.alloc_mode, "gpu_alloc");
    return 0;
  }
  for (int i = 0; i < FAKE_SLOTS; i++) {
    if (g_buffers[i].ptr == 0) {
      g_next_ptr += 0x100;
      g_buffers[i].ptr = 0x80000000u | g_next_ptr; /* high bit set: unsigned all the way */
      g_buffers[i].nbytes = ((uint64_t)hi << 32) | lo;
      g_buffers[i].device_id = device_id;
      g_buffers[i].usage = usage ? usage : 0x8c; /* STORAGE | COPY_SRC | COPY_DST */
      return g_buffers[i].ptr;
    }
  }
  fake.fail_code = WDL_OUT_OF_MEMORY;
  fail(FAKE_FAIL_LAST_ERROR, "gpu_alloc (table full)");
  return 0;
}

static fake_buffer *find(uint32_t ptr) {
  for (int i = 0; i < FAKE_SLOTS; i++) {
    if (g_buffers[i].ptr == ptr && ptr != 0) return &g_buffers[i];
  }
  return NULL;
}

static int32_t f_free(uint32_t ptr) {
  fake.free_calls++;
  if (fake.free_mode != FAKE_OK) return fail(fake.free_mode, "gpu_free");
  fake_buffer *b = find(ptr);
  if (b == NULL) {
    fake.fail_code = WDL_INVALID_POINTER;
    return fail(FAKE_FAIL_LAST_ERROR, "gpu_free (unknown pointer)");
  }
  memset(b, 0, sizeof *b);
  return 0;
}

static int32_t f_query(uint32_t ptr, wdl_gpu_buffer_info *out) {
  fake.query_calls++;
  if (fake.query_mode != FAKE_OK) return fail(fake.query_mode, "gpu_query");
  fake_buffer *b = find(ptr);
  if (b == NULL) {
    fake.fail_code = WDL_INVALID_POINTER;
    return fail(FAKE_FAIL_LAST_ERROR, "gpu_query (unknown pointer)");
  }
  out->nbytes = b->nbytes;
  out->allocated_nbytes = (b->nbytes + 15) & ~(uint64_t)15;
  out->device_id = b->device_id;
  out->usage = b->usage;
  out->owned = 1;
  return 0;
}

static int32_t f_to_js(DLManagedTensorVersioned *t) {
  fake.to_js_calls++;
  if (fake.to_js_mode != FAKE_OK) return fail(fake.to_js_mode, "tensor_to_js");
  return fake_publish_tensor(t);
}

static DLManagedTensorVersioned *f_from_js(int32_t handle) {
  fake.from_js_calls++;
  if (fake.from_js_mode != FAKE_OK) {
    fail(fake.from_js_mode, "tensor_from_js");
    return NULL;
  }
  DLManagedTensorVersioned *t = fake_take_tensor(handle);
  if (t == NULL) {
    fake.fail_code = WDL_ALREADY_CONSUMED;
    fail(FAKE_FAIL_LAST_ERROR, "tensor_from_js (no tensor under this handle)");
  }
  return t;
}

static int32_t f_last_error(char *buf, uint32_t cap) {
  fake.last_error_calls++;
  if (cap > 0) snprintf(buf, cap, "%s", g_msg);
  return g_msg_code;
}

wdl_host_table fake_host_table(void) {
  wdl_host_table t;
  memset(&t, 0, sizeof t);
  t.abi_version = WDL_HOST_TABLE_VERSION;
  t.struct_size = (uint32_t)sizeof t;
  t.gpu_alloc = f_alloc;
  t.gpu_free = f_free;
  t.gpu_query = f_query;
  t.tensor_to_js = f_to_js;
  t.tensor_from_js = f_from_js;
  t.last_error = f_last_error;
  return t;
}

void fake_host_reset(void) {
  memset(&fake, 0, sizeof fake);
  fake.fail_code = WDL_GPU_ERROR;
  memset(g_buffers, 0, sizeof g_buffers);
  memset(g_tensors, 0, sizeof g_tensors);
  g_msg[0] = '\0';
  g_msg_code = 0;
}

unsigned fake_live_buffers(void) {
  unsigned n = 0;
  for (int i = 0; i < FAKE_SLOTS; i++) n += g_buffers[i].ptr != 0;
  return n;
}

int32_t fake_publish_tensor(DLManagedTensorVersioned *t) {
  for (int i = 0; i < FAKE_SLOTS; i++) {
    if (g_tensors[i] == NULL) {
      g_tensors[i] = t;
      return i + 1;
    }
  }
  return 0;
}

DLManagedTensorVersioned *fake_take_tensor(int32_t handle) {
  if (handle <= 0 || handle > FAKE_SLOTS) return NULL;
  DLManagedTensorVersioned *t = g_tensors[handle - 1];
  g_tensors[handle - 1] = NULL;
  return t;
}

void fake_host_check_clean(void) {
  unsigned tensors = 0;
  for (int i = 0; i < FAKE_SLOTS; i++) {
    if (g_tensors[i] != NULL) {
      tensors++;
      wdl_managed_tensor_release(g_tensors[i]);
      g_tensors[i] = NULL;
    }
  }
  if (tensors) wdl_t_fail(__FILE__, __LINE__, "%u tensors left in the fake host", tensors);
}
