// gemmprofd --http with the real daemon (host backend) and the real CLI: /metrics read
// by a strict Prometheus text reader, the JSON API against `gemmprof report --format
// json`, tokens, and the dashboard page rendered by headless Chromium (a screenshot is
// kept in the build folder; the dumped DOM must hold the charts).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/integration/process.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::testing {
namespace {

using nlohmann::json;

// Waits for gemmprofd to write `path`; returns its first line ("" on timeout).
std::string AwaitPortFile(const std::string& path) {
  for (int i = 0; i < 400; ++i) {
    const std::string text = ReadTextFile(path);
    if (!text.empty() && text.back() == '\n') return text.substr(0, text.find('\n'));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

class HttpDashboardTest : public ::testing::Test {
 protected:
  void StartDaemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {GEMMPROFD_PATH,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--port-file",
                                     dir_.File("port"),
                                     "--http",
                                     "127.0.0.1:0",
                                     "--http-port-file",
                                     dir_.File("http-port"),
                                     "--db",
                                     dir_.File("results.db"),
                                     "--backend",
                                     "host"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<Process>(argv, dir_.File("gemmprofd.log"));
    const std::string port = AwaitPortFile(dir_.File("port"));
    const std::string http_port = AwaitPortFile(dir_.File("http-port"));
    ASSERT_FALSE(port.empty() || http_port.empty()) << "gemmprofd did not start:\n"
                                                    << ReadTextFile(dir_.File("gemmprofd.log"));
    address_ = "127.0.0.1:" + port;
    http_port_ = std::stoi(http_port);
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GEMMPROF_CLI_PATH, "--server", address_});
    return RunCommand(args);
  }

  // Submits and waits; returns the job id.
  int64_t SubmitAndWait(std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    args.insert(args.end(), {"--num-warmup", "0", "--num-iters", "2"});
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.out.empty() || !std::isdigit(static_cast<unsigned char>(r.out[0]))) {
      ADD_FAILURE() << "submit printed no job id: " << r.out << r.err;
      return 0;
    }
    const int64_t id = std::stoll(r.out);
    CommandResult w = Cli({"watch", std::to_string(id)});
    EXPECT_EQ(w.exit_code, 0) << w.err;
    return id;
  }

  httplib::Result Get(const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Client c("127.0.0.1", http_port_);
    c.set_read_timeout(30, 0);
    return c.Get(path.c_str(), headers);
  }

  TempDir dir_;
  std::unique_ptr<Process> daemon_;
  std::string address_;
  int http_port_ = 0;
};

TEST_F(HttpDashboardTest, MetricsAreValidPrometheusTextWithEveryMetric) {
  StartDaemon();
  const int64_t first = SubmitAndWait({"--shapes", "256x256x256", "--recipes", "bf16,fp8-current"});
  // The same job again is answered from the cache: two hits.
  SubmitAndWait({"--shapes", "256x256x256", "--recipes", "bf16,fp8-current"});
  ASSERT_GT(first, 0);
  auto r = Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  auto p = ParsePrometheusText(r->body);
  ASSERT_TRUE(p.ok()) << p.status() << "\n" << r->body;
  const std::map<std::string, std::string> want = {
      {"gemmprof_queue_depth", "gauge"},
      {"gemmprof_jobs", "gauge"},
      {"gemmprof_jobs_finished_total", "counter"},
      {"gemmprof_items_running", "gauge"},
      {"gemmprof_items_finished_total", "counter"},
      {"gemmprof_item_duration_seconds", "histogram"},
      {"gemmprof_cache_hits_total", "counter"},
      {"gemmprof_device_busy_seconds_total", "counter"},
      {"gemmprof_worker_restarts_total", "counter"},
      {"gemmprof_worker_hangs_total", "counter"},
      {"gemmprof_batch_retries_total", "counter"},
      {"gemmprof_build_info", "gauge"},
  };
  for (const auto& [name, type] : want) {
    ASSERT_EQ(p->families.count(name), 1u) << name << " missing:\n" << r->body;
    EXPECT_EQ(p->families.at(name).type, type) << name;
  }
  EXPECT_EQ(*p->Value("gemmprof_jobs_finished_total", {{"state", "succeeded"}}), 2);
  EXPECT_EQ(*p->Value("gemmprof_items_finished_total", {{"state", "done"}}), 4);
  EXPECT_EQ(*p->Value("gemmprof_cache_hits_total"), 2);
  EXPECT_EQ(*p->Value("gemmprof_item_duration_seconds_count"), 2);
  EXPECT_EQ(*p->Value("gemmprof_queue_depth"), 0);
  EXPECT_GT(*p->Value("gemmprof_device_busy_seconds_total", {{"device", "0"}}), 0);
  EXPECT_EQ(*p->Value("gemmprof_worker_restarts_total", {{"device", "0"}}), 0);
  // The host backend has no NVML: no device gauges rather than zeros.
  EXPECT_EQ(p->families.count("gemmprof_device_power_watts"), 0u);
}

TEST_F(HttpDashboardTest, ReportRouteIsByteIdenticalToTheCliJson) {
  StartDaemon();
  const int64_t a = SubmitAndWait({"--shapes", "256x256x256,128x256x512", "--recipes",
                                   "bf16,fp8-current,fp8-block", "--mode", "both"});
  const int64_t b = SubmitAndWait({"--shapes", "256x256x256", "--recipes", "bf16,nvfp4"});
  for (int64_t id : {a, b}) {
    CommandResult cli = Cli({"report", std::to_string(id), "--format", "json"});
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    auto http = Get("/api/v1/jobs/" + std::to_string(id) + "/report");
    ASSERT_TRUE(http);
    ASSERT_EQ(http->status, 200) << http->body;
    EXPECT_EQ(http->get_header_value("Content-Type"), "application/json");
    EXPECT_TRUE(http->body == cli.out) << "job " << id << " differs:\nHTTP:\n"
                                       << http->body << "\nCLI:\n"
                                       << cli.out;
    // The CSV form (what pandas.read_csv loads) is `report --format csv` byte for byte.
    CommandResult cli_csv = Cli({"report", std::to_string(id), "--format", "csv"});
    ASSERT_EQ(cli_csv.exit_code, 0) << cli_csv.err;
    auto csv = Get("/api/v1/jobs/" + std::to_string(id) + "/report.csv");
    ASSERT_TRUE(csv);
    ASSERT_EQ(csv->status, 200) << csv->body;
    EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
    EXPECT_TRUE(csv->body == cli_csv.out) << "job " << id << " CSV differs:\nHTTP:\n"
                                          << csv->body << "\nCLI:\n"
                                          << cli_csv.out;
  }
  auto jobs = Get("/api/v1/jobs");
  ASSERT_TRUE(jobs);
  auto doc = json::parse(jobs->body);
  ASSERT_EQ(doc["jobs"].size(), 2u);
  EXPECT_EQ(doc["jobs"][0]["id"], b);
  auto history = Get("/api/v1/history?shape=256x256x256&recipe=bf16&pass=fprop&mode=autocast");
  ASSERT_TRUE(history);
  ASSERT_EQ(history->status, 200) << history->body;
  EXPECT_EQ(json::parse(history->body)["results"].size(), 2u);  // one measured, one cached
  auto history_csv =
      Get("/api/v1/history.csv?shape=256x256x256&recipe=bf16&pass=fprop&mode=autocast");
  ASSERT_TRUE(history_csv);
  ASSERT_EQ(history_csv->status, 200) << history_csv->body;
  EXPECT_EQ(history_csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_EQ(std::count(history_csv->body.begin(), history_csv->body.end(), '\n'), 3);
  EXPECT_EQ(history_csv->body.rfind("result_id,job_id,", 0), 0u) << history_csv->body;
  auto first_page = Get("/api/v1/history.csv?page_size=1");
  ASSERT_TRUE(first_page);
  EXPECT_FALSE(first_page->get_header_value("X-Next-Page-Token").empty());
}

TEST_F(HttpDashboardTest, BadParametersAre400AndUnknownJobsAre404) {
  StartDaemon();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"/api/v1/jobs?page_size=0", "page_size='0': expected an integer from 1 to 1000"},
      {"/api/v1/jobs?state=finished", "state='finished': unknown value"},
      {"/api/v1/history?shape=256x256", "shape='256x256': expected MxKxN"},
      {"/api/v1/history?since=last-week", "since='last-week'"},
      {"/api/v1/history?recipe=fp16", "recipe='fp16'"},
      {"/api/v1/jobs/abc/report", "job id='abc'"},
      {"/api/v1/jobs/abc/report.csv", "job id='abc'"},
      {"/api/v1/history.csv?shape=256x256", "shape='256x256': expected MxKxN"},
  };
  for (const auto& [path, message] : bad) {
    auto r = Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find(message), std::string::npos) << path << ": " << r->body;
  }
  auto missing = Get("/api/v1/jobs/424242/report");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "not_found");
}

TEST_F(HttpDashboardTest, TokensOfTheGrpcSideGuardTheHttpSide) {
  WriteTextFile(dir_.File("tokens"), "viewer read " + wire::TokenSha256Hex("gpt_viewer_token") +
                                         "\nops admin " + wire::TokenSha256Hex("gpt_ops_token") +
                                         "\n");
  StartDaemon({"--tokens", dir_.File("tokens")});
  for (const char* path : {"/metrics", "/api/v1/jobs", "/api/v1/history", "/api/v1/jobs/1/report",
                           "/api/v1/jobs/1/report.csv", "/api/v1/history.csv"}) {
    auto none = Get(path);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 401) << path;
    auto unknown = Get(path, {{"Authorization", "Bearer gpt_guess"}});
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->status, 401) << path;
    EXPECT_NE(unknown->body.find("unknown token"), std::string::npos) << unknown->body;
  }
  auto metrics = Get("/metrics", {{"Authorization", "Bearer gpt_viewer_token"}});
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_TRUE(ParsePrometheusText(metrics->body).ok());
  auto jobs = Get("/api/v1/jobs", {{"Authorization", "Bearer gpt_ops_token"}});
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  // The header pandas sends: read_csv(url, storage_options={"Authorization": "Bearer ..."}).
  auto csv = Get("/api/v1/history.csv", {{"Authorization", "Bearer gpt_viewer_token"}});
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200) << csv->body;
  EXPECT_EQ(csv->body.rfind("result_id,", 0), 0u) << csv->body;
  const std::string log = ReadTextFile(dir_.File("gemmprofd.log"));
  EXPECT_EQ(log.find("gpt_viewer_token"), std::string::npos) << "a token reached the log";
}

TEST_F(HttpDashboardTest, BadHttpFlagsAreOneLineAtStart) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--http", "localhost"}, "--http 'localhost': expected HOST:PORT"},
      {{"--http", "127.0.0.1:99999"}, "--http '127.0.0.1:99999'"},
      {{"--http", "0.0.0.0:0"}, "--http 0.0.0.0:0: not a loopback address, and TLS is off"},
      {{"--http-port-file", dir_.File("p")}, "--http-port-file needs --http"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {GEMMPROFD_PATH, "--db", dir_.File("x.db"), "--backend",
                                     "host"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << message << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST_F(HttpDashboardTest, HttpsWithTheDaemonCertificate) {
  auto pki = MakeTestPki(dir_.path().string(), "dash");
  ASSERT_TRUE(pki.ok()) << pki.status();
  StartDaemon({"--tls-cert", pki->server_cert, "--tls-key", pki->server_key});
  httplib::SSLClient c("127.0.0.1", http_port_);
  c.set_ca_cert_path(pki->ca_cert.c_str());
  c.enable_server_certificate_verification(true);
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpDashboardTest, PageRendersChartsInHeadlessChromium) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty())
      << "chromium not found in PATH (nor GEMMPROF_CHROMIUM): this test needs Debian's "
         "chromium; deploy/install_deps.sh installs it (apt-get install chromium)";
  StartDaemon();
  const int64_t job =
      SubmitAndWait({"--shapes", "256x256x256,128x256x512", "--recipes",
                     "bf16,fp8-current,fp8-block", "--mode", "both", "--label", "page test"});
  SubmitAndWait({"--shapes", "256x256x256", "--recipes", "bf16", "--force"});
  SubmitAndWait({"--shapes", "256x256x256", "--recipes", "bf16", "--force"});
  const std::string url = "http://127.0.0.1:" + std::to_string(http_port_) +
                          "/#job=" + std::to_string(job) + "&recipe=bf16&shape=256x256x256";
  const std::string png = std::string(GEMMPROF_HTTP_ARTIFACT_DIR) + "/http_dashboard.png";
  std::filesystem::remove(png);
  const std::vector<std::string> common = HeadlessChromium(chromium, dir_.File("chromium-profile"));
  ASSERT_FALSE(common.empty()) << "coreutils' timeout not found in PATH";
  std::vector<std::string> shot = common;
  shot.insert(shot.end(), {"--screenshot=" + png, url});
  CommandResult s = RunCommand(shot);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string image = ReadTextFile(png);
  ASSERT_GT(image.size(), 10000u) << "screenshot " << png << " missing or blank: " << s.err;
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  std::vector<std::string> dump = common;
  dump.insert(dump.end(), {"--dump-dom", url});
  CommandResult d = RunCommand(dump);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string& dom = d.out;
  EXPECT_EQ(Count(dom, "class=\"job-row"), 3u) << dom;
  EXPECT_NE(dom.find("class=\"job-row selected\" data-job-id=\"" + std::to_string(job) + "\""),
            std::string::npos);
  EXPECT_NE(dom.find("<svg id=\"layer-chart\""), std::string::npos);
  // 3 recipes x 2 modes, Fprop only for a shape list.
  EXPECT_EQ(Count(dom, "class=\"layer-bar\""), 6u) << dom;
  EXPECT_EQ(Count(dom, "class=\"layer-group\""), 2u);
  EXPECT_NE(dom.find("data-recipe=\"fp8-block\" data-mode=\"prequant\""), std::string::npos);
  EXPECT_NE(dom.find("<svg id=\"history-chart\""), std::string::npos);
  // bf16 fprop autocast of 256x256x256: measured by the first job and the two --force jobs.
  EXPECT_EQ(Count(dom, "class=\"history-point\""), 3u) << dom;
  EXPECT_EQ(Count(dom, "class=\"history-line\""), 1u);
  EXPECT_EQ(dom.find("class=\"error\""), std::string::npos) << "the page reported an error";
}

}  // namespace
}  // namespace gemmprof::testing
