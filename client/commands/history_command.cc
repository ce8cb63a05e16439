#include "client/commands/history_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/format_flag.h"
#include "client/commands/since.h"
#include "client/render/listings.h"
#include "core/limits.h"
#include "core/shape_parser.h"

namespace gemmprof::client {
namespace {

template <typename E>
absl::Status ParseFilter(const char* flag, const std::optional<std::string>& value,
                         std::optional<E> (*parse)(std::string_view), const std::string& valid,
                         std::optional<E>& out) {
  if (!value) return absl::OkStatus();
  out = parse(*value);
  if (!out)
    return absl::InvalidArgumentError(std::string(flag) + ": unknown value \"" + *value +
                                      "\"; valid: " + valid);
  return absl::OkStatus();
}

}  // namespace

HistoryCommand::HistoryCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("history", "Stored results across jobs, newest first");
  const auto dim = CLI::Range(int64_t{1}, core::kMaxDim);
  app_->add_option("--m", m_, "Only GEMMs with this M")->check(dim);
  app_->add_option("--k", k_, "Only GEMMs with this K")->check(dim);
  app_->add_option("--n", n_, "Only GEMMs with this N")->check(dim);
  app_->add_option("--shape", shape_, "Only this MxKxN (instead of --m --k --n)");
  app_->add_option("--pass", pass_, "fprop, dgrad or wgrad");
  app_->add_option("--recipe", recipe_, "One recipe: " + core::RecipeList());
  app_->add_option("--mode", mode_, "autocast, prequant or dynamic");
  app_->add_option("--device", device_, "Device name, e.g. \"NVIDIA H100 80GB HBM3\"");
  app_->add_option("--node", node_, "Only results measured on this node (gemmprofd --node)");
  app_->add_option("--since", since_, "A date (2026-11-01, UTC) or an age (7d, 12h, 30m)");
  app_->add_option("--limit", limit_, "At most this many rows (1..10000, default 50)")
      ->check(CLI::Range(1, 10000));
  AddListingFormatOption(*app_, format_);
  app_->footer(R"(Examples:
  gemmprof history --shape 16384x4096x12288 --recipe fp8-block --since 7d
  gemmprof history --device "NVIDIA H100 80GB HBM3" --pass wgrad --since 2026-11-01
  gemmprof history --recipe fp8-rowwise --format csv > rowwise.csv)");
}

absl::Status HistoryCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  core::ResultFilter q;
  if (m_ > 0) q.m = m_;
  if (k_ > 0) q.k = k_;
  if (n_ > 0) q.n = n_;
  if (shape_) {
    if (m_ || k_ || n_)
      return absl::InvalidArgumentError("--shape and --m/--k/--n are mutually exclusive");
    auto shapes = core::ParseShapeList(*shape_);
    if (!shapes.ok() || shapes->size() != 1)
      return absl::InvalidArgumentError(
          "--shape: \"" + *shape_ + "\" is not one MxKxN shape" +
          (shapes.ok() ? "" : ": " + std::string(shapes.status().message())));
    q.m = shapes->front().m;
    q.k = shapes->front().k;
    q.n = shapes->front().n;
  }
  RETURN_IF_ERROR(ParseFilter("--pass", pass_, &core::ParsePass, "fprop, dgrad, wgrad", q.pass));
  RETURN_IF_ERROR(
      ParseFilter("--recipe", recipe_, &core::ParseRecipe, core::RecipeList(), q.recipe));
  RETURN_IF_ERROR(
      ParseFilter("--mode", mode_, &core::ParseMode, "autocast, prequant, dynamic", q.mode));
  if (device_) q.device_name = *device_;
  if (node_) q.node = *node_;
  if (since_) {
    ASSIGN_OR_RETURN(q.since_ms, ParseSince(*since_, ctx.now_ms));
  }
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const auto rows, client->QueryResults(q, limit_));
  ctx.out << render::RenderListing(render::HistoryListing(rows), format);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
