// `--campaign NAME` of the reading commands (jobs, report): one check, so both say the same.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gemmprof::client {

// OK for an empty name (no filter) or one of up to core::kMaxCampaignChars characters;
// INVALID_ARGUMENT naming the flag, the value and the limit otherwise.
absl::Status CheckCampaignFilter(const std::string& campaign);

}  // namespace gemmprof::client
