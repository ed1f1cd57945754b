/* fuzz_validate.h — the C validator fuzzer (tests/c/fuzz_validate.c), shared by the short test and make fuzz. */
#ifndef WDL_TEST_FUZZ_VALIDATE_H_
#define WDL_TEST_FUZZ_VALIDATE_H_

#include <stdint.h>

/** What one run saw: structs tried, accepted, refused, and wrong outcomes (a crash ends the run instead). */
typedef struct {
  uint64_t cases, accepted, refused, bad;
} wdl_fuzz_stats;

/** Run until max_cases structs (0: no limit) or `seconds` of wall time (0: no limit); 0 if no outcome was wrong. */
int wdl_fuzz_validate(uint64_t seed, uint64_t max_cases, double seconds, wdl_fuzz_stats *out);

#endif
