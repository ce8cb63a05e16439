// `gemmprof history`: stored results across jobs, filtered.
#pragma once

#include <optional>
#include <string>

#include "client/command.h"

namespace gemmprof::client {

class HistoryCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit HistoryCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
  int64_t m_ = 0, k_ = 0, n_ = 0;
  std::optional<std::string> shape_, pass_, recipe_, mode_, device_, since_, node_;
  int32_t limit_ = 50;
};

}  // namespace gemmprof::client
