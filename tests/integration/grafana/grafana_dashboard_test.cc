// deploy/grafana against a real PostgreSQL 15: the dashboard JSON is valid, every panel
// and variable reads the provisioned data source, and every SQL query in it (panels and
// variables) runs on a schema made by the real PgStore and returns the columns declared
// below. Queries are expanded by tests/integration/grafana/grafana_sql.h: a macro it
// does not know fails the test.
#include <libpq-fe.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/storage/open_store.h"
#include "tests/integration/grafana/grafana_sql.h"
#include "tests/support/pg_server.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::testing {
namespace {

using json = nlohmann::json;
using Columns = std::vector<std::string>;

constexpr char kDatasourceUid[] = "gemmprof-pg";
constexpr char kDatasourceType[] = "grafana-postgresql-datasource";
constexpr int64_t kT0 = 1'700'000'000'000;  // the fixture's first measurement, epoch ms

// The columns each query must return, in order: "panel <id>" or "variable <name>".
const std::map<std::string, Columns>& ExpectedColumns() {
  static const auto* columns = new std::map<std::string, Columns>{
      {"panel 1", {"time", "metric", "median_ms"}},
      {"panel 2", {"time", "metric", "tflops"}},
      {"panel 3",
       {"device", "pass", "recipe", "mode", "median_ms", "bf16_ms", "speedup", "results"}},
      {"panel 4", {"time", "metric", "throttled_share"}},
      {"panel 5",
       {"device", "node", "results", "throttled_results", "throttled_share",
        "throttled_sample_share", "clock_event_reasons_hex", "sm_clock_mhz_min", "temp_c_max"}},
      {"panel 6",
       {"measured", "node", "device", "device_uuid", "driver", "cuda", "cublaslt", "shape", "pass",
        "recipe", "mode", "groups", "median_ms", "tflops", "verification", "job_id",
        "submitted_by"}},
      {"panel 7", {"time", "metric", "tflop_per_joule"}},
      {"variable shape", {"shape"}},
      {"variable recipe", {"recipe"}},
      {"variable pass", {"pass"}},
      {"variable mode", {"mode"}},
      {"variable device", {"device_name"}},
      {"variable node", {"node"}},
      {"variable driver", {"driver_version"}},
  };
  return *columns;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json Dashboard() {
  json dashboard =
      json::parse(ReadFile(GEMMPROF_GRAFANA_DIR "/dashboards/gemmprof.json"), nullptr, false);
  EXPECT_FALSE(dashboard.is_discarded()) << "gemmprof.json is not valid JSON";
  return dashboard;
}

// The dashboard's template variables (an empty list when it has none).
json Variables(const json& dashboard) {
  return dashboard.value("templating", json::object()).value("list", json::array());
}

struct Query {
  std::string key;     // "panel <id>" / "variable <name>"
  std::string format;  // time_series, table; "" for variables
  std::string sql;
};

// Every SQL query in the dashboard: each panel's targets, then each query variable.
std::vector<Query> Queries(const json& dashboard) {
  std::vector<Query> out;
  for (const json& panel : dashboard.value("panels", json::array())) {
    for (const json& target : panel.value("targets", json::array())) {
      std::string key = absl::StrCat("panel ", panel.value("id", -1));
      if (target.value("refId", "A") != "A") absl::StrAppend(&key, " ", target.value("refId", ""));
      out.push_back({key, target.value("format", ""), target.value("rawSql", "")});
    }
  }
  for (const json& var : Variables(dashboard)) {
    if (var.value("type", "") != "query") continue;
    const json q = var.value("query", json());
    out.push_back({absl::StrCat("variable ", var.value("name", "")), "",
                   q.is_string() ? q.get<std::string>() : q.value("rawSql", "")});
  }
  return out;
}

// A query's result as text; `error` set when it failed.
struct Rows {
  std::string error;
  Columns columns;
  std::vector<std::vector<std::string>> values;  // NULL reads as ""
};

Rows RunSql(PGconn* conn, const std::string& sql) {
  Rows rows;
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn, sql.c_str()), &PQclear);
  const ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    rows.error = PQresultErrorMessage(res.get());
    return rows;
  }
  for (int c = 0; c < PQnfields(res.get()); ++c) rows.columns.push_back(PQfname(res.get(), c));
  for (int r = 0; r < PQntuples(res.get()); ++r) {
    std::vector<std::string>& row = rows.values.emplace_back();
    for (int c = 0; c < PQnfields(res.get()); ++c) row.push_back(PQgetvalue(res.get(), r, c));
  }
  return rows;
}

using Conn = std::unique_ptr<PGconn, decltype(&PQfinish)>;

Conn Connect(const std::string& uri) {
  Conn conn(PQconnectdb(uri.c_str()), &PQfinish);
  EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  return conn;
}

// `key: value` of the first line in `yaml` whose key is `key` (indentation ignored).
std::string YamlValue(const std::string& yaml, const std::string& key) {
  std::istringstream lines(yaml);
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(" -");
    if (start == std::string::npos || line.compare(start, key.size() + 1, key + ":") != 0) continue;
    const size_t value = line.find_first_not_of(' ', start + key.size() + 1);
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

TEST(GrafanaProvisioningTest, DatasourceSettingsComeFromTheEnvironment) {
  const std::string yaml = ReadFile(GEMMPROF_GRAFANA_DIR "/provisioning/datasources/gemmprof.yaml");
  EXPECT_EQ(YamlValue(yaml, "uid"), kDatasourceUid);
  EXPECT_EQ(YamlValue(yaml, "type"), kDatasourceType);
  EXPECT_EQ(YamlValue(yaml, "url"), "${GEMMPROF_PG_HOST}:${GEMMPROF_PG_PORT}");
  EXPECT_EQ(YamlValue(yaml, "user"), "${GEMMPROF_PG_USER}");
  EXPECT_EQ(YamlValue(yaml, "database"), "${GEMMPROF_PG_DATABASE}");
  EXPECT_EQ(YamlValue(yaml, "sslmode"), "${GEMMPROF_PG_SSLMODE}");
  // The password is only ever a reference to Grafana's environment.
  EXPECT_EQ(YamlValue(yaml, "password"), "${GEMMPROF_PG_PASSWORD}");
  EXPECT_EQ(yaml.find("password:"), yaml.rfind("password:")) << "one password line only";
}

TEST(GrafanaProvisioningTest, DashboardProviderLoadsFiles) {
  const std::string yaml = ReadFile(GEMMPROF_GRAFANA_DIR "/provisioning/dashboards/gemmprof.yaml");
  EXPECT_EQ(YamlValue(yaml, "type"), "file");
  EXPECT_NE(YamlValue(yaml, "path"), "");
}

TEST(GrafanaProvisioningTest, EveryPanelAndVariableUsesTheProvisionedDatasource) {
  const json dashboard = Dashboard();
  ASSERT_TRUE(dashboard.is_object());
  EXPECT_FALSE(dashboard.value("uid", "").empty());
  auto check = [](const json& ds, const std::string& where) {
    ASSERT_TRUE(ds.is_object()) << where << " names no datasource";
    EXPECT_EQ(ds.value("uid", ""), kDatasourceUid) << where;
    EXPECT_EQ(ds.value("type", ""), kDatasourceType) << where;
  };
  const json panels = dashboard.value("panels", json());
  ASSERT_TRUE(panels.is_array());
  ASSERT_FALSE(panels.empty());
  std::set<int> ids;
  for (const json& panel : panels) {
    const std::string where = absl::StrCat("panel ", panel.value("id", -1));
    EXPECT_TRUE(ids.insert(panel.value("id", -1)).second) << where << ": ids must be unique";
    check(panel.value("datasource", json()), where);
    const json targets = panel.value("targets", json());
    ASSERT_TRUE(targets.is_array() && !targets.empty()) << where;
    for (const json& target : targets) {
      check(target.value("datasource", json()), where + " target");
      EXPECT_FALSE(target.value("rawSql", "").empty()) << where;
      EXPECT_TRUE(target.value("rawQuery", false)) << where;
    }
  }
  for (const json& var : Variables(dashboard)) {
    check(var.value("datasource", json()), absl::StrCat("variable ", var.value("name", "")));
  }
}

core::Measurement Measured(double median_ms, int seq) {
  core::Measurement m = storage::testing::SampleMeasurement(median_ms);
  m.telemetry.sm_clock_mhz_min = 1500 + seq;
  m.telemetry.temp_c_max = 60 + seq % 20;
  if (seq % 3 == 0) {  // throttled: power cap seen in 2 of 3 samples, idle too
    m.telemetry.throttle_reasons = 0x4 | 0x1;
    m.telemetry.throttled_samples = 2;
  }
  if (seq % 7 == 5) m.telemetry.telemetry_samples = 0;  // as the host backend writes it
  if (seq % 2 == 0) {  // measured with --energy: 600 W over the GEMM's time
    m.energy.joules = 0.6 * median_ms;
    m.energy.power_w = 600;
    m.energy.window_s = 1.1;
    m.energy.counter_updates = 11;
  }
  if (seq == 11) m.flops = std::nan("");
  if (seq == 13) m.time.median_ms = std::nan("");  // stored as 0 in median_ms
  return m;
}

// A database with two nodes' jobs written through the real PgStore: node-a measures on
// an H100, node-b on a B200 with another driver, one result every two hours for two days.
class GrafanaDashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PgServer*> server = PgServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> uri = (*server)->NewDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
    core::DeviceInfo b200 = storage::testing::H100();
    b200.name = "NVIDIA B200";
    b200.uuid = "GPU-b200-0";
    b200.sm = 100;
    b200.driver_version = "590.10";
    Fill("node-a", storage::testing::H100(), kT0);
    Fill("node-b", b200, kT0 + 3'600'000);
  }

  void Fill(const std::string& node, const core::DeviceInfo& device, int64_t start_ms) {
    int64_t now = start_ms;
    storage::StoreOptions options;
    options.node = node;
    options.now_ms = [&now] { return now; };
    absl::StatusOr<std::unique_ptr<storage::ResultStore>> store =
        storage::OpenResultStore(uri_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    core::JobRecord seed = storage::testing::SeedJob(node);
    seed.device = device;
    absl::StatusOr<core::JobRecord> job =
        (*store)->CreateJob(seed, storage::testing::SeedItems(24, 8192));
    ASSERT_TRUE(job.ok()) << job.status();
    absl::StatusOr<std::vector<core::ItemRecord>> items = (*store)->GetItems(job->id);
    ASSERT_TRUE(items.ok()) << items.status();
    for (const core::ItemRecord& rec : *items) {
      now += 2 * 3'600'000;
      ASSERT_TRUE((*store)->MarkItemRunning(rec.item.id).ok());
      const std::string key = absl::StrCat(node, ":", rec.item.id);
      const double ms = (rec.item.recipe == core::Recipe::kBf16 ? 2.0 : 1.2) + 0.01 * rec.item.seq;
      absl::Status done = (*store)->FinishItem(rec.item.id, core::ItemStatus::kDone, "",
                                               Measured(ms, static_cast<int>(rec.item.seq)), device,
                                               {}, key, std::nullopt);
      ASSERT_TRUE(done.ok()) << done;
    }
  }

  GrafanaRequest Request() const {
    GrafanaRequest request;
    request.from_ms = kT0 - 86'400'000;
    request.to_ms = kT0 + 30 * 86'400'000LL;
    request.interval = "6h";
    return request;
  }

  // Each variable set as Grafana does from its own query: All of the values, or the
  // first for a single-value variable (`first_only`: the first value for every one).
  GrafanaRequest RequestWithVariables(PGconn* conn, const json& dashboard, bool first_only) {
    GrafanaRequest request = Request();
    for (const json& var : Variables(dashboard)) {
      absl::StatusOr<std::string> sql = ExpandGrafanaSql(var.value("query", ""), Request());
      EXPECT_TRUE(sql.ok()) << sql.status();
      Rows rows = RunSql(conn, sql.value_or(""));
      EXPECT_EQ(rows.error, "") << "variable " << var.value("name", "");
      GrafanaVariable& value = request.variables[var.value("name", "")];
      value.multi = var.value("multi", false) || var.value("includeAll", false);
      for (const auto& row : rows.values) {
        if (!first_only || value.values.empty()) value.values.push_back(row.at(0));
      }
      EXPECT_FALSE(value.values.empty()) << "variable " << var.value("name", "") << " is empty";
    }
    return request;
  }

  std::string uri_;
};

TEST_F(GrafanaDashboardTest, EveryQueryRunsAndReturnsItsColumns) {
  const json dashboard = Dashboard();
  Conn conn = Connect(uri_);
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  const GrafanaRequest request = RequestWithVariables(conn.get(), dashboard, false);
  std::set<std::string> seen;
  for (const Query& q : Queries(dashboard)) {
    SCOPED_TRACE(q.key);
    seen.insert(q.key);
    auto expected = ExpectedColumns().find(q.key);
    ASSERT_NE(expected, ExpectedColumns().end()) << "declare the columns of " << q.key;
    absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.sql, request);
    ASSERT_TRUE(sql.ok()) << sql.status();
    Rows rows = RunSql(conn.get(), *sql);
    ASSERT_EQ(rows.error, "") << *sql;
    EXPECT_EQ(rows.columns, expected->second);
    EXPECT_FALSE(rows.values.empty()) << "no rows from the fixture:\n" << *sql;
    if (q.format == "time_series") {
      EXPECT_EQ(rows.columns.front(), "time") << "a time series' first column is its time";
    }
  }
  for (const auto& [key, columns] : ExpectedColumns()) {
    EXPECT_TRUE(seen.contains(key)) << key << " is declared but not in the dashboard";
  }
}

// The values the panels show come from where the test put them.
TEST_F(GrafanaDashboardTest, PanelsReadTheStoredFigures) {
  const json dashboard = Dashboard();
  Conn conn = Connect(uri_);
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  const GrafanaRequest request = RequestWithVariables(conn.get(), dashboard, false);
  std::map<std::string, Rows> by_key;
  for (const Query& q : Queries(dashboard)) {
    absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.sql, request);
    ASSERT_TRUE(sql.ok()) << q.key << ": " << sql.status();
    by_key[q.key] = RunSql(conn.get(), *sql);
    ASSERT_EQ(by_key[q.key].error, "") << q.key;
  }
  // Speedups: bf16 is 2.0 ms + seq/100, the others 1.2 ms + seq/100.
  for (const auto& row : by_key["panel 3"].values) {
    const double speedup = std::stod(row[6]);
    if (row[2] == "bf16") {
      EXPECT_NEAR(speedup, 1.0, 0.1) << absl::StrJoin(row, " ");
    } else {
      EXPECT_GT(speedup, 1.3) << absl::StrJoin(row, " ");
    }
  }
  // Throttling: each node has throttled results (seq % 3 == 0) and unthrottled ones.
  ASSERT_EQ(by_key["panel 5"].values.size(), 2u);
  for (const auto& row : by_key["panel 5"].values) {
    const double share = std::stod(row[4]);
    EXPECT_GT(share, 0.2) << absl::StrJoin(row, " ");
    EXPECT_LT(share, 0.5) << absl::StrJoin(row, " ");
    EXPECT_EQ(row[6], "5") << "the OR of reasons 0x4|0x1";
  }
  // The throttled share over time: within [0, 1], and above 0 where throttling was seen.
  double most = 0;
  for (const auto& row : by_key["panel 4"].values) {
    const double share = std::stod(row[2]);
    EXPECT_GE(share, 0.0);
    EXPECT_LE(share, 1.0);
    most = std::max(most, share);
  }
  EXPECT_GT(most, 0.0) << "no bucket shows the throttled results";
  // TFLOP/J: flops / joules of the results measured with --energy (even seq), none other.
  ASSERT_FALSE(by_key["panel 7"].values.empty());
  for (const auto& row : by_key["panel 7"].values) {
    const double tflop_per_joule = std::stod(row[2]);
    EXPECT_GT(tflop_per_joule, 0) << absl::StrJoin(row, " ");
    EXPECT_LT(tflop_per_joule, 1e3) << absl::StrJoin(row, " ");
  }
  // Latest results: newest first, contexts joined (cuda version from the device context).
  const Rows& latest = by_key["panel 6"];
  ASSERT_EQ(latest.values.size(), 48u);
  EXPECT_EQ(latest.values.front()[1], "node-b");
  EXPECT_EQ(latest.values.front()[3], "GPU-b200-0");
  EXPECT_EQ(latest.values.front()[5], "13.0");
}

// The README's read-only role (its SQL, as written there) is enough for every query,
// and can only read.
TEST_F(GrafanaDashboardTest, QueriesRunAsAReadOnlyRole) {
  Conn owner = Connect(uri_);
  ASSERT_EQ(PQstatus(owner.get()), CONNECTION_OK);
  const std::string database = uri_.substr(uri_.rfind('/') + 1);
  for (const std::string& sql :
       {std::string("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
                    "'gemmprof_grafana') THEN CREATE ROLE gemmprof_grafana LOGIN; END IF; "
                    "END $$"),
        "GRANT CONNECT ON DATABASE " + database + " TO gemmprof_grafana",
        std::string("GRANT USAGE ON SCHEMA public TO gemmprof_grafana"),
        std::string("GRANT SELECT ON ALL TABLES IN SCHEMA public TO gemmprof_grafana"),
        std::string("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO "
                    "gemmprof_grafana"),
        std::string("ALTER ROLE gemmprof_grafana SET default_transaction_read_only = on"),
        std::string("ALTER ROLE gemmprof_grafana SET statement_timeout = '30s'")}) {
    ASSERT_EQ(RunSql(owner.get(), sql).error, "") << sql;
  }
  const size_t at = uri_.find('@');
  ASSERT_NE(at, std::string::npos);
  Conn reader = Connect("postgresql://gemmprof_grafana" + uri_.substr(at));
  ASSERT_EQ(PQstatus(reader.get()), CONNECTION_OK);
  const json dashboard = Dashboard();
  const GrafanaRequest request = RequestWithVariables(reader.get(), dashboard, false);
  for (const Query& q : Queries(dashboard)) {
    absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.sql, request);
    ASSERT_TRUE(sql.ok()) << q.key << ": " << sql.status();
    EXPECT_EQ(RunSql(reader.get(), *sql).error, "") << q.key;
  }
  EXPECT_NE(RunSql(reader.get(), "DELETE FROM results").error, "");
  EXPECT_NE(
      RunSql(reader.get(), "SET default_transaction_read_only = off; DELETE FROM results").error,
      "")
      << "SELECT is all the role was granted";
}

// One value of every variable (a narrow selection) still gives valid SQL.
TEST_F(GrafanaDashboardTest, QueriesRunWithOneValueOfEachVariable) {
  const json dashboard = Dashboard();
  Conn conn = Connect(uri_);
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  const GrafanaRequest request = RequestWithVariables(conn.get(), dashboard, true);
  for (const Query& q : Queries(dashboard)) {
    absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.sql, request);
    ASSERT_TRUE(sql.ok()) << q.key << ": " << sql.status();
    Rows rows = RunSql(conn.get(), *sql);
    EXPECT_EQ(rows.error, "") << q.key << "\n" << *sql;
    EXPECT_EQ(rows.columns, ExpectedColumns().at(q.key)) << q.key;
  }
}

}  // namespace
}  // namespace gemmprof::testing
