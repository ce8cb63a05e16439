#include "device/runner.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gemmprof::device {

absl::StatusOr<core::Measurement> MeasureOne(Runner& runner, const core::WorkItem& item,
                                             const core::TimingOptions& timing) {
  core::GroupRequest request;
  request.group_uid = absl::StrCat(runner.Info().uuid, "/item", item.id);
  request.items = {item};
  request.timing = timing;
  ASSIGN_OR_RETURN(core::GroupResult result, runner.MeasureGroup(request));
  if (result.outcomes.size() != 1) {
    return absl::InternalError(
        absl::StrCat("a group of one item came back with ", result.outcomes.size(), " outcomes"));
  }
  core::ItemOutcome& outcome = result.outcomes.front();
  RETURN_IF_ERROR(outcome.status);
  if (!outcome.measurement.has_value()) {
    return absl::InternalError("a measured item came back without its measurement");
  }
  return *std::move(outcome.measurement);
}

absl::Status CanImplementOne(const Runner& runner, const core::WorkItem& item,
                             const core::TimingOptions& timing) {
  ASSIGN_OR_RETURN(std::vector<absl::Status> answers, runner.CanImplement({item}, timing));
  if (answers.size() != 1) {
    return absl::InternalError(
        absl::StrCat("a fit check of one item came back with ", answers.size(), " answers"));
  }
  return answers.front();
}

}  // namespace gemmprof::device
