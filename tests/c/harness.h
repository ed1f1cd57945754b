/*
 * harness.h — a tiny test harness for the native tests: each case is a
 * function; CHECK macros record the first failure and return from the case.
 * main (harness.c) runs every case, prints one line per case and writes
 * JUnit XML with one <testcase> per case (--junit PATH).
 */
#ifndef WDL_TEST_HARNESS_H_
#define WDL_TEST_HARNESS_H_

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** One test case: the group it belongs to, its name and its body. */
typedef struct {
  const char *group;
  const char *name;
  void (*fn)(void);
} wdl_test_case;

/** Record a failure at file:line (first failure of a case wins). */
void wdl_t_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** Count one executed check (a case that checks nothing fails). */
void wdl_t_checked(void);
/** 1 if the current case has failed. */
int wdl_t_has_failed(void);

#define CHECK(cond)                                       \
  do {                                                    \
    wdl_t_checked();                                      \
    if (!(cond)) {                                        \
      wdl_t_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
      return;                                             \
    }                                                     \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
  do {                                                                                             \
    int64_t wdl_a_ = (int64_t)(a), wdl_b_ = (int64_t)(b);                                          \
    wdl_t_checked();                                                                               \
    if (wdl_a_ != wdl_b_) {                                                                        \
      wdl_t_fail(__FILE__, __LINE__, "%s == %s: %" PRId64 " != %" PRId64, #a, #b, wdl_a_, wdl_b_); \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
  do {                                                                                             \
    uint64_t wdl_a_ = (uint64_t)(a), wdl_b_ = (uint64_t)(b);                                       \
    wdl_t_checked();                                                                               \
    if (wdl_a_ != wdl_b_) {                                                                        \
      wdl_t_fail(__FILE__, __LINE__, "%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, wdl_a_, wdl_b_); \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                         \
  do {                                                                                                      \
    const char *wdl_h_ = (hay), *wdl_n_ = (needle);                                                         \
    wdl_t_checked();                                                                                        \
    if (wdl_h_ == NULL || strstr(wdl_h_, wdl_n_) == NULL) {                                                 \
      wdl_t_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", wdl_h_ ? wdl_h_ : "(null)", wdl_n_); \
      return;                                                                                               \
    }                                                                                                       \
  } while (0)

/** Check the library's last error: code and a substring of the message. */
#define CHECK_ERROR(code, needle)                       \
  do {                                                  \
    CHECK_EQ_INT(wdl_last_error_code(), (code));        \
    CHECK_CONTAINS(wdl_last_error_message(), (needle)); \
  } while (0)

/* Case tables, one per test file. */
extern const wdl_test_case wdl_errors_cases[];
extern const size_t wdl_errors_count;
extern const wdl_test_case wdl_validate_cases[];
extern const size_t wdl_validate_count;
extern const wdl_test_case wdl_managed_cases[];
extern const size_t wdl_managed_count;
extern const wdl_test_case wdl_webgpu_cases[];
extern const size_t wdl_webgpu_count;
extern const wdl_test_case wdl_host_cases[];
extern const size_t wdl_host_count;
extern const wdl_test_case wdl_example_cases[];
extern const size_t wdl_example_count;
/* Include orders of upstream dlpack.h and webdlpack.h (tests/c/test_dlpack_order_*.c). */
extern const wdl_test_case wdl_dlpack_upstream_first_cases[];
extern const size_t wdl_dlpack_upstream_first_count;
extern const wdl_test_case wdl_dlpack_webdlpack_first_cases[];
extern const size_t wdl_dlpack_webdlpack_first_count;
extern const wdl_test_case wdl_dlpack_via_macro_cases[];
extern const size_t wdl_dlpack_via_macro_count;

#define WDL_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif /* WDL_TEST_HARNESS_H_ */
