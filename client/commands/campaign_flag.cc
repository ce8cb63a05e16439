#include "client/commands/campaign_flag.h"

#include "absl/strings/str_cat.h"
#include "core/job.h"

namespace gemmprof::client {

absl::Status CheckCampaignFilter(const std::string& campaign) {
  if (campaign.size() <= core::kMaxCampaignChars) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--campaign: '", campaign, "' is longer than ",
                                                 core::kMaxCampaignChars, " characters"));
}

}  // namespace gemmprof::client
