/*
 * Long mode of the C validator fuzzer (make fuzz): fuzz_validate --seconds N [--seed S].
 * Built with ASan/UBSan like the tests; prints one summary line; exit 1 on a wrong outcome.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_validate.h"

int main(int argc, char **argv) {
  double seconds = 60;
  uint64_t seed = (uint64_t)time(NULL);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--seconds") == 0)
      seconds = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--seed") == 0)
      seed = strtoull(argv[i + 1], NULL, 0);
  }
  wdl_fuzz_stats st;
  int rc = wdl_fuzz_validate(seed, 0, seconds, &st);
  printf(
      "fuzz C validator (ASan/UBSan): %.0f s, seed %llu: %llu structs, %llu accepted, %llu refused, %llu wrong, 0 "
      "crashes\n",
      seconds, (unsigned long long)seed, (unsigned long long)st.cases, (unsigned long long)st.accepted,
      (unsigned long long)st.refused, (unsigned long long)st.bad);
  return rc == 0 ? 0 : 1;
}
