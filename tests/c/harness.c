/*
 * harness.c — runs every native test case and writes JUnit XML.
 * Usage: webdlpack_tests [--junit PATH] [FILTER]
 * Before each case the library's host and last error are reset; after it,
 * the harness fails the case if it leaked managed tensors or GPU pointers
 * or executed no check.
 */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fake_host.h"
#include "webdlpack/webdlpack.h"

static char g_fail_msg[2048];
static int g_failed;
static unsigned g_checks;

void wdl_t_fail(const char *file, int line, const char *fmt, ...) {
  if (g_failed) return;
  g_failed = 1;
  int n = snprintf(g_fail_msg, sizeof g_fail_msg, "%s:%d: ", file, line);
  if (n < 0 || (size_t)n >= sizeof g_fail_msg) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_fail_msg + n, sizeof g_fail_msg - (size_t)n, fmt, ap);
  va_end(ap);
}

void wdl_t_checked(void) { g_checks++; }

int wdl_t_has_failed(void) { return g_failed; }

typedef struct {
  const wdl_test_case *c;
  int failed;
  double seconds;
  char msg[2048];
} result;

static void xml_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '<':
        fputs("&lt;", f);
        break;
      case '>':
        fputs("&gt;", f);
        break;
      case '&':
        fputs("&amp;", f);
        break;
      case '"':
        fputs("&quot;", f);
        break;
      default:
        if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
          fputc('?', f);
        else
          fputc(*s, f);
    }
  }
}

static int write_junit(const char *path, const result *rs, size_t n, size_t failures, double total) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<testsuites name=\"c\" tests=\"%zu\" failures=\"%zu\" time=\"%.6f\">\n", n, failures, total);
  fprintf(
      f, "  <testsuite name=\"webdlpack-c\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.6f\">\n",
      n, failures, total);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "    <testcase classname=\"c.");
    xml_escape(f, rs[i].c->group);
    fprintf(f, "\" name=\"");
    xml_escape(f, rs[i].c->name);
    fprintf(f, "\" time=\"%.6f\"", rs[i].seconds);
    if (rs[i].failed) {
      fprintf(f, ">\n      <failure message=\"");
      xml_escape(f, rs[i].msg);
      fprintf(f, "\"/>\n    </testcase>\n");
    } else {
      fprintf(f, "/>\n");
    }
  }
  fprintf(f, "  </testsuite>\n</testsuites>\n");
  return fclose(f) == 0 ? 0 : -1;
}

static double now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *junit = NULL, *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--junit") == 0 && i + 1 < argc)
      junit = argv[++i];
    else
      filter = argv[i];
  }
  struct {
    const wdl_test_case *cases;
    size_t n;
  } groups[] = {
      {wdl_errors_cases, wdl_errors_count},
      {wdl_validate_cases, wdl_validate_count},
      {wdl_managed_cases, wdl_managed_count},
      {wdl_webgpu_cases, wdl_webgpu_count},
      {wdl_host_cases, wdl_host_count},
      {wdl_example_cases, wdl_example_count},
      {wdl_dlpack_upstream_first_cases, wdl_dlpack_upstream_first_count},
      {wdl_dlpack_webdlpack_first_cases, wdl_dlpack_webdlpack_first_count},
      {wdl_dlpack_via_macro_cases, wdl_dlpack_via_macro_count},
  };
  size_t total = 0;
  for (size_t g = 0; g < WDL_COUNT_OF(groups); g++) total += groups[g].n;
  result *rs = calloc(total, sizeof *rs);
  if (rs == NULL) return 2;
  size_t ran = 0, failures = 0;
  double t_all = now();
  for (size_t g = 0; g < WDL_COUNT_OF(groups); g++) {
    for (size_t i = 0; i < groups[g].n; i++) {
      const wdl_test_case *c = &groups[g].cases[i];
      if (filter != NULL && strstr(c->name, filter) == NULL && strstr(c->group, filter) == NULL) continue;
      wdl_shutdown();
      wdl_clear_error();
      fake_host_reset();
      uint32_t live_before = wdl_managed_tensor_live_count();
      wdl_webgpu_stats gpu_before;
      wdl_webgpu_stats_get(&gpu_before);
      g_failed = 0;
      g_checks = 0;
      g_fail_msg[0] = '\0';
      double t0 = now();
      c->fn();
      double dt = now() - t0;
      wdl_webgpu_stats gpu_after;
      wdl_webgpu_stats_get(&gpu_after);
      if (!g_failed && g_checks == 0) wdl_t_fail(__FILE__, __LINE__, "the case checked nothing");
      if (!g_failed && wdl_managed_tensor_live_count() != live_before)
        wdl_t_fail(__FILE__, __LINE__, "leaked managed tensors: %u live before, %u after", live_before,
                   wdl_managed_tensor_live_count());
      if (!g_failed && gpu_after.live_count != gpu_before.live_count)
        wdl_t_fail(__FILE__, __LINE__, "leaked GPU pointers: %u live before, %u after", gpu_before.live_count,
                   gpu_after.live_count);
      if (!g_failed) fake_host_check_clean();
      result *r = &rs[ran++];
      r->c = c;
      r->failed = g_failed;
      r->seconds = dt;
      snprintf(r->msg, sizeof r->msg, "%s", g_fail_msg);
      if (g_failed) failures++;
      printf("%s %s.%s%s%s\n", g_failed ? "FAIL" : "ok  ", c->group, c->name, g_failed ? "\n     " : "",
             g_failed ? g_fail_msg : "");
    }
  }
  double t_total = now() - t_all;
  printf("%zu cases, %zu passed, %zu failed\n", ran, ran - failures, failures);
  int rc = failures == 0 && ran > 0 ? 0 : 1;
  if (junit != NULL && write_junit(junit, rs, ran, failures, t_total) != 0) rc = 2;
  free(rs);
  wdl_shutdown();
  return rc;
}
