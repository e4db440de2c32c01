// Test-only switches of the output writers, read from the environment, so
// that the fault tests can make a file system slow or failing on purpose
// (docs/faults.md lists them). Unset: no effect; malformed: an InputError.
#pragma once

#include <string>

namespace strata::test_switches {

// The non-negative integer `text` of switch `name`.
long long number(const char* name, const std::string& text);

// STRATA_TEST_OUTPUT_DELAY_MS in seconds, 0 when unset: each output write
// (a background job, an H5MD frame) sleeps that long first.
double output_delay();

}  // namespace strata::test_switches
