#include "client/app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "client/commands/cancel_command.h"
#include "client/commands/compare_command.h"
#include "client/commands/devices_command.h"
#include "client/commands/history_command.h"
#include "client/commands/jobs_command.h"
#include "client/commands/plan_command.h"
#include "client/commands/plot_command.h"
#include "client/commands/report_command.h"
#include "client/commands/submit_command.h"
#include "client/commands/watch_command.h"
#include "client/server_address.h"
#include "client/transport.h"

namespace gemmprof::client {
namespace {

int64_t WallClockMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int Fail(std::ostream& err, int code, std::string_view message) {
  err << "gemmprof: " << OneLine(message) << "\n";
  return code;
}

// CLI11 prints a positional's type and checks ("JOB INT:INT:INT in [1 - 9223...] REQUIRED");
// the usage line already shows it is required, so its help keeps name and description.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_positional() ? "" : CLI::Formatter::make_option_opts(opt);
  }
};

}  // namespace

std::string OneLine(std::string_view message) {
  std::string out;
  for (char c : message) {
    if (c == '\n') {
      if (!out.empty()) out += "; ";
    } else if (c != '\r') {
      out += c;
    }
  }
  while (out.size() >= 2 && out.compare(out.size() - 2, 2, "; ") == 0) out.resize(out.size() - 2);
  return out;
}

App::App() : App(&Transport::Connect, &WallClockMs, isatty(STDOUT_FILENO) == 1) {}

App::App(ClientFactory factory, std::function<int64_t()> now_ms, bool out_is_tty)
    : factory_(std::move(factory)), now_ms_(std::move(now_ms)), out_is_tty_(out_is_tty) {}

App::~App() = default;

int App::Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Run(args, out, err);
}

namespace {

std::vector<std::unique_ptr<Command>> MakeCommands(CLI::App& cli) {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<SubmitCommand>(cli));
  commands.push_back(std::make_unique<PlanCommand>(cli));
  commands.push_back(std::make_unique<JobsCommand>(cli));
  commands.push_back(std::make_unique<WatchCommand>(cli));
  commands.push_back(std::make_unique<CancelCommand>(cli));
  commands.push_back(std::make_unique<ReportCommand>(cli));
  commands.push_back(std::make_unique<PlotCommand>(cli));
  commands.push_back(std::make_unique<DevicesCommand>(cli));
  commands.push_back(std::make_unique<HistoryCommand>(cli));
  commands.push_back(std::make_unique<CompareCommand>(cli));
  return commands;
}

// CLI11 calls a mistyped command "A subcommand is required"; name it instead.
absl::Status CheckCommandName(const std::vector<std::string>& args,
                              const std::vector<std::unique_ptr<Command>>& commands) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--server") {
      ++i;
      continue;
    }
    if (args[i].empty() || args[i][0] == '-') continue;
    std::string valid;
    for (const auto& c : commands) {
      if (c->subcommand()->get_name() == args[i]) return absl::OkStatus();
      valid += (valid.empty() ? "" : ", ") + c->subcommand()->get_name();
    }
    return absl::InvalidArgumentError("unknown command \"" + args[i] + "\"; valid: " + valid);
  }
  return absl::OkStatus();
}

}  // namespace

int App::Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App cli("gemmprof: profile the GEMMs of transformer models on a gemmprofd server",
               "gemmprof");
  cli.require_subcommand(1);
  cli.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which copy it
  std::string server = kDefaultServer;
  cli.add_option("--server", server, "gemmprofd address HOST:PORT")
      ->envname("GEMMPROF_SERVER")
      ->capture_default_str();
  cli.footer(R"(Examples:
  gemmprof submit --shapes 4096,8192 --recipes bf16,fp8-current --wait
  gemmprof jobs
  gemmprof report 42 --format markdown
  gemmprof --server gpu-node:50051 devices
Run `gemmprof COMMAND --help` for each command's flags and examples.)");
  const std::vector<std::unique_ptr<Command>> commands = MakeCommands(cli);
  if (const absl::Status name = CheckCommandName(args, commands); !name.ok())
    return Fail(err, kExitUsage, std::string(name.message()));
  // CLI11 reports through exceptions; they stop here and become an exit code.
  try {
    cli.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    return Fail(err, kExitUsage, e.what());
  }
  const auto address = ParseServerAddress(server);
  if (!address.ok()) return Fail(err, kExitUsage, std::string(address.status().message()));
  return RunCommand(commands, *address, out, err);
}

int App::RunCommand(const std::vector<std::unique_ptr<Command>>& commands,
                    const std::string& address, std::ostream& out, std::ostream& err) {
  std::unique_ptr<GemmProfClient> client;
  CommandContext ctx{out, err, out_is_tty_, now_ms_(), nullptr};
  ctx.client = [&]() -> absl::StatusOr<GemmProfClient*> {
    if (!client) {
      ASSIGN_OR_RETURN(client, factory_(address));
    }
    return client.get();
  };
  for (const auto& command : commands) {
    if (!command->subcommand()->parsed()) continue;
    const absl::Status status = command->Run(ctx);
    out.flush();
    if (status.ok()) return kExitOk;
    // A flag value the command itself rejected, before talking to the server.
    const bool usage = absl::IsInvalidArgument(status) && !client;
    return Fail(err, usage ? kExitUsage : kExitFailure, std::string(status.message()));
  }
  return Fail(err, kExitUsage, "no command given; run gemmprof --help");
}

}  // namespace gemmprof::client
