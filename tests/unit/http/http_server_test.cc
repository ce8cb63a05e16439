#include "server/http/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "server/storage/open_store.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::http {
namespace {

using nlohmann::json;

TEST(ParseHttpAddressTest, HostAndPort) {
  auto a = ParseHttpAddress("127.0.0.1:9464");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  auto v6 = ParseHttpAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(ParseHttpAddress("localhost:65535")->port, 65535);
}

TEST(ParseHttpAddressTest, BadAddressesNameTheFlagAndTheValue) {
  for (const char* bad : {"", "9464", ":9464", "host:", "host:65536", "host:-1", "host:80x",
                          "::1:80", "[::1:80", "[]:80"}) {
    auto a = ParseHttpAddress(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(a.status()));
    EXPECT_NE(a.status().message().find(std::string("--http '") + bad + "'"), std::string::npos)
        << a.status();
    EXPECT_NE(a.status().message().find("0 to 65535"), std::string::npos);
  }
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::OpenResultStore(dir_.File("results.db"), {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpOptions options) {
    HttpSources sources;
    sources.store = store_.get();
    sources.metrics = [] { return std::string("# TYPE up gauge\nup 1\n"); };
    return HttpServer::Start(options, sources);
  }

  std::shared_ptr<security::AccessControl> Tokens() {
    std::ofstream(dir_.File("tokens"))
        << "reader read " << wire::TokenSha256Hex("gpt_reader") << "\nadmin admin "
        << wire::TokenSha256Hex("gpt_admin") << "\n";
    auto access = security::AccessControl::FromFile(dir_.File("tokens"));
    EXPECT_TRUE(access.ok()) << access.status();
    return access.ok() ? std::shared_ptr<security::AccessControl>(*std::move(access)) : nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::ResultStore> store_;
};

TEST_F(HttpServerTest, ServesEveryRouteOnAnEphemeralPort) {
  auto server = Start({"127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);
  httplib::Client c("127.0.0.1", (*server)->port());
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "# TYPE up gauge\nup 1\n");
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  auto jobs = c.Get("/api/v1/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  EXPECT_EQ(json::parse(jobs->body)["jobs"].size(), 0u);
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("id=\"layer-chart\""), std::string::npos);
  EXPECT_NE(page->body.find("id=\"history-chart\""), std::string::npos);
  // Self-contained: no scripts, styles or fonts from elsewhere.
  EXPECT_EQ(page->body.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page->body.find("href=\"http"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
}

TEST_F(HttpServerTest, ErrorsAreJson) {
  auto server = Start({"127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client c("127.0.0.1", (*server)->port());
  auto missing = c.Get("/api/v1/jobs/7/report");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "not_found");
  auto bad = c.Get("/api/v1/jobs?page_size=0");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(json::parse(bad->body)["error"]["message"].get<std::string>().find("page_size='0'"),
            std::string::npos);
  auto bad_history = c.Get("/api/v1/history?shape=12");
  ASSERT_TRUE(bad_history);
  EXPECT_EQ(bad_history->status, 400);
  auto nowhere = c.Get("/api/v2/jobs");
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
  EXPECT_NE(nowhere->body.find("no route GET /api/v2/jobs"), std::string::npos);
}

TEST_F(HttpServerTest, TokensGuardMetricsAndApiButNotTheStaticPage) {
  HttpOptions options{"127.0.0.1:0"};
  options.access = Tokens();
  auto server = Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client c("127.0.0.1", (*server)->port());
  for (const char* path :
       {"/metrics", "/api/v1/jobs", "/api/v1/jobs/1/report", "/api/v1/history"}) {
    auto none = c.Get(path);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 401) << path;
    EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"gemmprofd\"");
    EXPECT_NE(none->body.find("no token"), std::string::npos) << none->body;
    auto wrong = c.Get(path, {{"Authorization", "Bearer gpt_nobody"}});
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->status, 401) << path;
    EXPECT_EQ(wrong->body.find("gpt_nobody"), std::string::npos) << "a token was echoed";
    auto malformed = c.Get(path, {{"Authorization", "Basic abc"}});
    ASSERT_TRUE(malformed);
    EXPECT_EQ(malformed->status, 401) << path;
  }
  auto ok = c.Get("/metrics", {{"Authorization", "Bearer gpt_reader"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto admin = c.Get("/api/v1/jobs", {{"Authorization", "bearer gpt_admin"}});
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200);
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
}

TEST_F(HttpServerTest, RefusesPlaintextOnTheNetworkWithoutInsecure) {
  auto refused = Start({"0.0.0.0:0"});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()));
  EXPECT_NE(refused.status().message().find("--http 0.0.0.0:0: not a loopback address"),
            std::string::npos);
  HttpOptions insecure{"0.0.0.0:0"};
  insecure.insecure = true;
  auto allowed = Start(insecure);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
}

TEST_F(HttpServerTest, BadOrBusyAddressesFailAtStart) {
  auto bad = Start({"127.0.0.1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  auto first = Start({"127.0.0.1:0"});
  ASSERT_TRUE(first.ok());
  auto busy = Start({"127.0.0.1:" + std::to_string((*first)->port())});
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.status().message().find("cannot listen there"), std::string::npos);
}

TEST_F(HttpServerTest, ServesHttpsWithTheDaemonCertificate) {
  auto pki = testing::MakeTestPki(dir_.path().string(), "http");
  ASSERT_TRUE(pki.ok()) << pki.status();
  HttpOptions options{"127.0.0.1:0"};
  options.tls_cert = pki->server_cert;
  options.tls_key = pki->server_key;
  auto server = Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->tls());
  httplib::SSLClient tls("127.0.0.1", (*server)->port());
  tls.set_ca_cert_path(pki->ca_cert.c_str());
  tls.enable_server_certificate_verification(true);
  auto r = tls.Get("/metrics");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  // Plain HTTP to the TLS port gets no answer.
  httplib::Client plain("127.0.0.1", (*server)->port());
  plain.set_read_timeout(5, 0);
  auto p = plain.Get("/metrics");
  EXPECT_TRUE(!p || p->status != 200);
}

TEST_F(HttpServerTest, BadTlsFilesFailAtStart) {
  std::ofstream(dir_.File("junk.pem")) << "not a certificate\n";
  HttpOptions options{"127.0.0.1:0"};
  options.tls_cert = dir_.File("junk.pem");
  options.tls_key = dir_.File("junk.pem");
  auto server = Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("cannot serve HTTPS"), std::string::npos);
}

TEST_F(HttpServerTest, StopIsIdempotent) {
  auto server = Start({"127.0.0.1:0"});
  ASSERT_TRUE(server.ok());
  const int port = (*server)->port();
  (*server)->Stop();
  (*server)->Stop();
  httplib::Client c("127.0.0.1", port);
  EXPECT_FALSE(c.Get("/metrics"));
}

}  // namespace
}  // namespace gemmprof::http
