#include "client/render/listings.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "client/render/format.h"
#include "client/render/report_experts.h"
#include "client/render/text_table.h"
#include "core/derive.h"
#include "report/figures.h"
#include "report/notices.h"
#include "report/record_json.h"

namespace gemmprof::client::render {
namespace {

std::string S(std::string_view v) { return std::string(v); }
// "-" in the table for a field not set; the machine forms leave it absent.
std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }
Cell OrAbsent(const std::string& s) { return s.empty() ? Cell{} : Cell{s}; }
Cell OrAbsent(int64_t unix_ms) { return unix_ms > 0 ? Cell{unix_ms} : Cell{}; }

// A document of one untitled section holding `table` at `indent`.
Document TableDocument(std::string title, TextTable table, int indent) {
  Document doc;
  doc.title = std::move(title);
  Block block = Table(std::move(table));
  block.indent = indent;
  doc.sections.push_back({"", {std::move(block)}});
  return doc;
}

}  // namespace

std::optional<ListingFormat> ParseListingFormat(std::string_view name) {
  if (name == "table") return ListingFormat::kTable;
  if (name == "csv") return ListingFormat::kCsv;
  if (name == "json") return ListingFormat::kJson;
  if (name == "markdown") return ListingFormat::kMarkdown;
  return std::nullopt;
}

std::string RenderListing(const Listing& listing, ListingFormat format) {
  switch (format) {
    case ListingFormat::kTable:
      if (listing.records.rows.empty() && !listing.empty_text.empty())
        return listing.empty_text + "\n";
      return RenderText(listing.doc);
    case ListingFormat::kMarkdown:
      return RenderMarkdown(listing.doc);
    case ListingFormat::kCsv:
      return RenderRecordsCsv(listing.records);
    case ListingFormat::kJson: {
      nlohmann::ordered_json out = listing.summary;
      if (!listing.rows_key.empty()) out[listing.rows_key] = RecordsJson(listing.records);
      return out.dump(2) + "\n";
    }
  }
  return "";
}

Listing PlanListing(const core::Plan& plan, const core::JobSpec& spec) {
  TextTable t({"pass", "op", "MxKxN", "groups", "layers", "GFLOP per call", "GFLOP per model"},
              {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight,
               Align::kRight, Align::kRight});
  Listing l;
  l.records.columns = {
      "pass",           "op", "m", "k", "n", "groups", "layers", "per_layer", "gflop_per_call",
      "gflop_per_model"};
  l.rows_key = "gemms";
  double total = 0;
  for (const core::GemmOp& op : plan.ops) {
    const int64_t times = op.per_layer ? op.layers : 1;
    const double per_model = op.Flops() * static_cast<double>(times);
    total += per_model;
    t.AddRow({S(core::ToString(op.pass)), op.name, op.shape.ToString(), std::to_string(op.groups),
              op.per_layer ? std::to_string(op.layers) : "once", FormatFixed(op.Flops() / 1e9, 1),
              FormatFixed(per_model / 1e9, 1)});
    l.records.Add({S(core::ToString(op.pass)), op.name, op.shape.m, op.shape.k, op.shape.n,
                   int64_t{op.groups}, times, op.per_layer, op.Flops() / 1e9, per_model / 1e9});
  }
  const std::vector<core::Recipe> recipes = core::EffectiveRecipes(spec);
  const std::vector<core::RecipeVariant> reported = core::ReportedRecipes(spec);
  const std::vector<core::Mode> modes = core::EffectiveModes(spec);
  const size_t items =
      core::ExpandItems(plan, recipes, modes, spec.variants, spec.timing.fast_accum).size();
  const std::string title = "Plan: " + plan.model_name + ", " + std::to_string(plan.num_layers) +
                            " layers, " + std::to_string(plan.ops.size()) + " GEMMs";
  l.doc = TableDocument(title, std::move(t), 2);
  const std::string counts =
      spec.variants.empty()
          ? std::to_string(plan.ops.size()) + " GEMMs x " + std::to_string(recipes.size()) +
                " recipes x " + std::to_string(modes.size()) + " modes"
          : std::to_string(plan.ops.size()) + " GEMMs x the recipes their pass runs x " +
                std::to_string(modes.size()) +
                " modes; a variant's pass shares the item of "
                "the recipe it runs, unless it names another accumulation than --fast-accum "
                "gives that pass";
  std::vector<std::string> lines = {"Total: " + FormatFixed(total / 1e12, 3) + " TFLOP per step; " +
                                    std::to_string(items) + " items (" + counts + ")"};
  for (const core::RecipeVariant& v : spec.variants) {
    std::string own;
    for (core::Pass pass : core::OwnItemPasses(v, plan, spec.timing.fast_accum))
      own += (own.empty() ? "" : ", ") + S(core::ToString(pass));
    lines.push_back("Variant " + v.Name() + ": " + v.Describe() +
                    (own.empty() ? ""
                                 : "; items of its own (another accumulation than "
                                   "--fast-accum gives): " +
                                       own));
  }
  l.doc.sections.front().blocks.push_back(Lines(lines));
  if (std::optional<Block> experts = ExpertsBlock(plan.ops, spec.model)) {
    l.doc.sections.push_back({"Routed experts", {std::move(*experts)}});
  }
  nlohmann::ordered_json recipe_names = nlohmann::ordered_json::array();
  nlohmann::ordered_json mode_names = nlohmann::ordered_json::array();
  for (const core::RecipeVariant& r : reported) recipe_names.push_back(r.Name());
  for (core::Mode m : modes) mode_names.push_back(S(core::ToString(m)));
  l.summary = {{"model", plan.model_name}, {"num_layers", plan.num_layers},
               {"recipes", recipe_names},  {"modes", mode_names},
               {"items", items},           {"tflop_per_step", total / 1e12}};
  if (nlohmann::ordered_json experts = ExpertsJson(plan.ops); !experts.empty()) {
    l.summary["experts"] = std::move(experts);
  }
  return l;
}

Listing JobsListing(const std::vector<core::JobRecord>& jobs) {
  // The campaign column only when a listed job belongs to one.
  const bool campaigns = std::any_of(
      jobs.begin(), jobs.end(), [](const core::JobRecord& j) { return !j.spec.campaign.empty(); });
  std::vector<std::string> headers = {"id",    "state", "items done", "failed", "model",
                                      "label", "node",  "device",     "by",     "created"};
  std::vector<Align> aligns = {Align::kRight, Align::kLeft, Align::kRight, Align::kRight,
                               Align::kLeft,  Align::kLeft, Align::kLeft,  Align::kLeft,
                               Align::kLeft,  Align::kLeft};
  if (campaigns) {
    headers.push_back("campaign");
    aligns.push_back(Align::kLeft);
  }
  // Which daemons measure a running cluster job now, when any listed job has one.
  const bool measuring = std::any_of(jobs.begin(), jobs.end(), [](const core::JobRecord& j) {
    return !j.measuring_nodes.empty();
  });
  if (measuring) {
    headers.push_back("measuring on");
    aligns.push_back(Align::kLeft);
  }
  TextTable t(headers, aligns);
  Listing l;
  l.records.columns = {"id",          "state",      "finished_items", "total_items", "failed_items",
                       "model",       "label",      "node",           "device",      "submitted_by",
                       "created_utc", "created_ms", "started_ms",     "finished_ms", "error",
                       "where",       "campaign",   "measuring_nodes"};
  l.rows_key = "jobs";
  l.empty_text = "no jobs";
  for (const core::JobRecord& j : jobs) {
    std::vector<std::string> row = {
        std::to_string(j.id),
        S(core::ToString(j.state)),
        std::to_string(j.finished_items) + "/" + std::to_string(j.total_items),
        std::to_string(j.failed_items),
        j.plan.model_name,
        j.spec.label,
        OrDash(j.node),
        OrDash(j.device.name),
        OrDash(j.submitted_by),
        FormatUtc(j.created_ms)};
    if (campaigns) row.push_back(OrDash(j.spec.campaign));
    if (measuring) row.push_back(OrDash(absl::StrJoin(j.measuring_nodes, ",")));
    t.AddRow(row);
    l.records.Add({j.id, S(core::ToString(j.state)), int64_t{j.finished_items},
                   int64_t{j.total_items}, int64_t{j.failed_items}, j.plan.model_name, j.spec.label,
                   OrAbsent(j.node), OrAbsent(j.device.name), OrAbsent(j.submitted_by),
                   FormatIsoUtc(j.created_ms), OrAbsent(j.created_ms), OrAbsent(j.started_ms),
                   OrAbsent(j.finished_ms), OrAbsent(j.error), core::ToString(j.spec.where),
                   OrAbsent(j.spec.campaign), OrAbsent(absl::StrJoin(j.measuring_nodes, " "))});
  }
  l.doc = TableDocument("", std::move(t), 0);
  return l;
}

Listing ClusterListing(const core::DaemonListing& listing) {
  TextTable t({"node", "state", "devices", "busy", "backend", "version", "heartbeat", "started"},
              {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft,
               Align::kRight, Align::kLeft});
  Listing l;
  l.records.columns = {"node",           "state",      "backend",       "version",
                       "devices",        "busy",       "models",        "unavailable",
                       "started_utc",    "started_ms", "heartbeat_utc", "heartbeat_ms",
                       "heartbeat_age_s"};
  l.rows_key = "daemons";
  l.summary["now_unix_ms"] = listing.now_unix_ms;
  l.empty_text = "no daemon has written its record to this store yet";
  for (const core::DaemonRecord& d : listing.daemons) {
    const std::string state(core::ToString(core::DaemonStateOf(d, listing.now_unix_ms)));
    std::string models;
    int64_t unavailable = 0;
    for (const core::DaemonDeviceModel& m : d.models) {
      if (!models.empty()) models += "; ";
      models += std::to_string(m.count) + "x " + m.name;
      if (m.unavailable > 0) models += " (" + std::to_string(m.unavailable) + " unavailable)";
      unavailable += m.unavailable;
    }
    const int64_t age_ms = std::max<int64_t>(0, listing.now_unix_ms - d.heartbeat_unix_ms);
    t.AddRow({d.node, state, OrDash(models),
              std::to_string(d.busy) + " of " + std::to_string(d.devices), OrDash(d.backend),
              OrDash(d.version), FormatDuration(age_ms) + " ago", FormatUtc(d.started_unix_ms)});
    l.records.Add({d.node, state, OrAbsent(d.backend), OrAbsent(d.version), int64_t{d.devices},
                   int64_t{d.busy}, OrAbsent(models), unavailable, FormatIsoUtc(d.started_unix_ms),
                   OrAbsent(d.started_unix_ms), FormatIsoUtc(d.heartbeat_unix_ms),
                   OrAbsent(d.heartbeat_unix_ms), static_cast<double>(age_ms) / 1000.0});
  }
  l.doc = TableDocument("", std::move(t), 0);
  return l;
}

Listing DevicesListing(const std::vector<core::DeviceInfo>& devices) {
  Listing l;
  l.records.columns = {"device",
                       "backend",
                       "sm",
                       "sm_count",
                       "memory_bytes",
                       "driver_version",
                       "cuda_version",
                       "cublaslt_version",
                       "gemmprof_version",
                       "unavailable",
                       "unavailable_reason",
                       "recipe",
                       "supported",
                       "reason"};
  l.empty_text = "no devices";
  nlohmann::ordered_json objects = nlohmann::ordered_json::array();
  for (const core::DeviceInfo& d : devices) {
    Section s;
    s.title = d.name + " (" + d.backend + (d.sm > 0 ? ", sm_" + std::to_string(d.sm) : "") +
              (d.sm_count > 0 ? ", " + std::to_string(d.sm_count) + " SMs" : "") +
              (d.memory_bytes > 0 ? ", " + FormatGib(d.memory_bytes) : "") + ")";
    std::vector<std::string> lines;
    // A device whose worker never started is known by its name only.
    if (d.unavailable) lines.push_back("UNAVAILABLE: " + d.unavailable_reason);
    const bool known = !(d.unavailable && d.recipes.empty());
    if (known && d.backend == "host-reference") lines.push_back(report::kHostReferenceBanner);
    if (known)
      lines.push_back("driver " + d.driver_version + ", CUDA " + d.cuda_version + ", cuBLASLt " +
                      d.cublaslt_version + ", gemmprof " + d.gemmprof_version);
    if (!lines.empty()) s.blocks.push_back(Bullets(lines));
    const std::vector<Cell> device = {d.name,
                                      d.backend,
                                      int64_t{d.sm},
                                      int64_t{d.sm_count},
                                      d.memory_bytes,
                                      d.driver_version,
                                      d.cuda_version,
                                      d.cublaslt_version,
                                      d.gemmprof_version,
                                      d.unavailable,
                                      OrAbsent(d.unavailable_reason)};
    if (known) {
      TextTable t({"recipe", "supported", "reason"}, {Align::kLeft, Align::kLeft, Align::kLeft});
      for (const core::RecipeSupport& r : d.recipes) {
        t.AddRow({S(core::ToString(r.recipe)), r.supported ? "yes" : "no", r.reason});
        std::vector<Cell> row = device;
        row.insert(row.end(), {S(core::ToString(r.recipe)), r.supported, OrAbsent(r.reason)});
        l.records.Add(std::move(row));
      }
      s.blocks.push_back(Table(std::move(t)));
    }
    if (d.recipes.empty()) l.records.Add(device);
    l.doc.sections.push_back(std::move(s));
    nlohmann::ordered_json object = report::DeviceJson(d);
    object["unavailable"] = d.unavailable;
    object["unavailable_reason"] = d.unavailable_reason;
    objects.push_back(std::move(object));
  }
  l.summary = {{"devices", objects}};
  return l;
}

Listing HistoryListing(const std::vector<core::ResultRow>& rows) {
  // The energy columns show only where a result has an energy figure (--energy jobs).
  bool energy = false;
  for (const core::ResultRow& r : rows) energy |= r.measurement && r.measurement->energy.present();
  std::vector<std::string> headers = {"measured",  "job",     "device",  "pass",
                                      "op",        "MxKxN",   "recipe",  "mode",
                                      "median ms", "TFLOP/s", "samples", "cached"};
  std::vector<Align> align = {Align::kLeft,  Align::kRight, Align::kLeft,  Align::kLeft,
                              Align::kLeft,  Align::kLeft,  Align::kLeft,  Align::kLeft,
                              Align::kRight, Align::kRight, Align::kRight, Align::kLeft};
  if (energy) {
    headers.insert(headers.end(), {"mJ per GEMM", "TFLOP/J"});
    align.insert(align.end(), {Align::kRight, Align::kRight});
  }
  TextTable t(headers, align);
  Listing l;
  l.records.columns = {"measured_utc",
                       "measured_ms",
                       "result_id",
                       "job_id",
                       "node",
                       "device",
                       "pass",
                       "op",
                       "m",
                       "k",
                       "n",
                       "groups",
                       "recipe",
                       "mode",
                       "median_ms",
                       "tflops",
                       "samples",
                       "cached",
                       "context",
                       "energy_joules",
                       "tflop_per_joule"};
  l.rows_key = "results";
  l.empty_text = "no results match";
  for (const core::ResultRow& r : rows) {
    const core::GemmOp& op = r.item.op;
    const core::Measurement* m = r.measurement ? &*r.measurement : nullptr;
    const bool j = m && m->energy.present();
    const double tflop_per_joule = j && m->flops > 0 ? m->flops / m->energy.joules / 1e12 : 0;
    std::vector<std::string> cells = {FormatUtc(r.measured_ms),
                                      std::to_string(r.job_id),
                                      r.device.name,
                                      S(core::ToString(op.pass)),
                                      op.name,
                                      op.shape.ToString(),
                                      report::RecipeLabel(r.item),
                                      S(core::ToString(r.item.mode)),
                                      m ? FormatMs(m->time.median_ms) : "-",
                                      m ? FormatTflops(report::TflopsOf(r.item, *m)) : "-",
                                      m ? std::to_string(m->time.count) : "-",
                                      r.cached ? "yes" : "no"};
    if (energy) {
      cells.push_back(j ? FormatFixed(m->energy.joules * 1e3, 3) : "-");
      cells.push_back(tflop_per_joule > 0 ? FormatFixed(tflop_per_joule, 2) : "-");
    }
    t.AddRow(std::move(cells));
    l.records.Add({FormatIsoUtc(r.measured_ms),
                   OrAbsent(r.measured_ms),
                   r.result_id,
                   r.job_id,
                   OrAbsent(r.node),
                   r.device.name,
                   S(core::ToString(op.pass)),
                   op.name,
                   op.shape.m,
                   op.shape.k,
                   op.shape.n,
                   int64_t{op.groups},
                   S(core::ToString(r.item.recipe)),
                   S(core::ToString(r.item.mode)),
                   m ? Cell{m->time.median_ms} : Cell{},
                   m ? Cell{report::TflopsOf(r.item, *m)} : Cell{},
                   m ? Cell{int64_t{m->time.count}} : Cell{},
                   r.cached,
                   m ? OrAbsent(m->context) : Cell{},
                   j ? Cell{m->energy.joules} : Cell{},
                   tflop_per_joule > 0 ? Cell{tflop_per_joule} : Cell{}});
  }
  l.doc = TableDocument("", std::move(t), 0);
  return l;
}

}  // namespace gemmprof::client::render
