// `gemmprof cluster`: the daemons that share the daemon's store, from their records.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class ClusterCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit ClusterCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
};

}  // namespace gemmprof::client
