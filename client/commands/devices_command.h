// `gemmprof devices`: the daemon's devices and the recipes each supports.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class DevicesCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit DevicesCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
};

}  // namespace gemmprof::client
