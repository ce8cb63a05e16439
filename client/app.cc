#include "client/app.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include "client/commands/cancel_command.h"
#include "client/commands/compare_command.h"
#include "client/commands/cluster_command.h"
#include "client/commands/devices_command.h"
#include "client/commands/history_command.h"
#include "client/commands/jobs_command.h"
#include "client/commands/plan_command.h"
#include "client/commands/plot_command.h"
#include "client/commands/report_command.h"
#include "client/commands/submit_command.h"
#include "client/commands/token_command.h"
#include "client/commands/watch_command.h"
#include "client/global_flags.h"
#include "client/transport.h"

namespace gemmprof::client {
namespace {

int64_t WallClockMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

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

App::App()
    : App(&Transport::Connect, &WallClockMs, isatty(STDOUT_FILENO) == 1, ProcessEnvironment(),
          &SleepMs) {}

App::App(ClientFactory factory, std::function<int64_t()> now_ms, bool out_is_tty, Environment env,
         std::function<void(int64_t)> sleep_ms)
    : factory_(std::move(factory)),
      now_ms_(std::move(now_ms)),
      out_is_tty_(out_is_tty),
      env_(std::move(env)),
      sleep_ms_(sleep_ms ? std::move(sleep_ms) : std::function<void(int64_t)>(&SleepMs)) {}

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
  commands.push_back(std::make_unique<ClusterCommand>(cli));
  commands.push_back(std::make_unique<HistoryCommand>(cli));
  commands.push_back(std::make_unique<CompareCommand>(cli));
  commands.push_back(std::make_unique<TokenCommand>(cli));
  return commands;
}

// A command with commands of its own (`token new`): the word after it must name one.
absl::Status CheckSubcommandName(const CLI::App& command, const std::vector<std::string>& args,
                                 size_t next) {
  const std::vector<const CLI::App*> subs = command.get_subcommands({});
  if (subs.empty() || next >= args.size() || args[next].empty() || args[next][0] == '-')
    return absl::OkStatus();
  std::string valid;
  for (const CLI::App* sub : subs) {
    if (sub->get_name() == args[next]) return absl::OkStatus();
    valid += (valid.empty() ? "" : ", ") + sub->get_name();
  }
  return absl::InvalidArgumentError("unknown " + command.get_name() + " command \"" + args[next] +
                                    "\"; valid: " + valid);
}

// CLI11 calls a mistyped command "A subcommand is required"; name it instead.
absl::Status CheckCommandName(const std::vector<std::string>& args,
                              const std::vector<std::unique_ptr<Command>>& commands) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (GlobalFlags::TakesValue(args[i])) {
      ++i;
      continue;
    }
    if (args[i].empty() || args[i][0] == '-') continue;
    std::string valid;
    for (const auto& c : commands) {
      if (c->subcommand()->get_name() == args[i])
        return CheckSubcommandName(*c->subcommand(), args, i + 1);
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
  // Global flags may also follow the command (`gemmprof jobs --server h:1`).
  cli.fallthrough();
  GlobalFlags global;
  global.Register(cli);
  cli.footer(std::string(GlobalHelpFooter()));
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
  return RunCommand(commands, global.Flags(), out, err);
}

int App::RunCommand(const std::vector<std::unique_ptr<Command>>& commands,
                    const ConnectionFlags& flags, std::ostream& out, std::ostream& err) {
  std::unique_ptr<GemmProfClient> client;
  CommandContext ctx{out, err, out_is_tty_, now_ms_(), nullptr};
  ctx.sleep_ms = sleep_ms_;
  ctx.client = [&]() -> absl::StatusOr<GemmProfClient*> {
    if (!client) {
      ASSIGN_OR_RETURN(const ConnectionSettings settings, ResolveConnection(flags, env_, err));
      ASSIGN_OR_RETURN(client, factory_(settings));
      ctx.server_address = settings.address;
    }
    return client.get();
  };
  for (const auto& command : commands) {
    if (!command->subcommand()->parsed()) continue;
    const absl::Status status = command->Run(ctx);
    out.flush();
    if (status.ok()) return kExitOk;
    if (const std::optional<int> code = ExitCodeOf(status))
      return Fail(err, *code, std::string(status.message()));
    // A flag, environment or config value rejected before talking to the server.
    const bool usage = absl::IsInvalidArgument(status) && !client;
    return Fail(err, usage ? kExitUsage : kExitFailure, std::string(status.message()));
  }
  return Fail(err, kExitUsage, "no command given; run gemmprof --help");
}

}  // namespace gemmprof::client
