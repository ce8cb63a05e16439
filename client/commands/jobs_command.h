// `gemmprof jobs`: lists jobs, newest first.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class JobsCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit JobsCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
  std::string state_;
  int32_t limit_ = 20;
  std::string node_;
  std::string campaign_;
};

}  // namespace gemmprof::client
