// The test expander of Grafana's variables and macros (grafana_sql.h): what it supports
// comes out as Grafana's PostgreSQL data source writes it; anything else is an error.
#include "tests/integration/grafana/grafana_sql.h"

#include "gtest/gtest.h"

namespace gemmprof::testing {
namespace {

GrafanaRequest Request() {
  GrafanaRequest r;
  r.from_ms = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
  r.to_ms = 1'700'003'600'500;
  r.interval = "5m";
  r.variables["device"] = {{"NVIDIA H100", "it's B200"}, true};
  r.variables["shape"] = {{"8192x4096x4096"}, false};
  r.variables["odd"] = {{"a'b"}, false};
  return r;
}

std::string Expand(std::string_view sql) {
  absl::StatusOr<std::string> out = ExpandGrafanaSql(sql, Request());
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

TEST(GrafanaSqlTest, MultiValueVariablesBecomeQuotedLists) {
  EXPECT_EQ(Expand("d IN ($device)"), "d IN ('NVIDIA H100','it''s B200')");
  EXPECT_EQ(Expand("d IN (${device})"), "d IN ('NVIDIA H100','it''s B200')");
  EXPECT_EQ(Expand("d IN ([[device]])"), "d IN ('NVIDIA H100','it''s B200')");
}

TEST(GrafanaSqlTest, SingleValueVariablesAreRawWithQuotesDoubled) {
  EXPECT_EQ(Expand("s = '$shape'"), "s = '8192x4096x4096'");
  EXPECT_EQ(Expand("s = '${odd}'"), "s = 'a''b'");
}

TEST(GrafanaSqlTest, TimeMacros) {
  EXPECT_EQ(Expand("$__timeFilter(r.t)"),
            "r.t BETWEEN '2023-11-14T22:13:20Z' AND '2023-11-14T23:13:20.500Z'");
  EXPECT_EQ(Expand("$__timeFrom() < $__timeTo( )"),
            "'2023-11-14T22:13:20Z' < '2023-11-14T23:13:20.500Z'");
  EXPECT_EQ(Expand("$__timeGroupAlias(r.t, $__interval)"),
            "floor(extract(epoch from r.t)/300)*300 AS \"time\"");
  EXPECT_EQ(Expand("$__timeGroup(t, '1h')"), "floor(extract(epoch from t)/3600)*3600");
  EXPECT_EQ(Expand("$__timeGroup(t, 500ms)"), "floor(extract(epoch from t)/0.5)*0.5");
  EXPECT_EQ(Expand("$__interval_ms"), "300000");
}

TEST(GrafanaSqlTest, UnknownMacrosAndVariablesFail) {
  for (const char* sql :
       {"$__unixEpochFilter(measured_ms)", "$__timeEpoch(t)", "$__timeFilter", "$__range",
        "$nosuch", "${nosuch}", "[[nosuch]]", "${device:csv}", "$ 1", "$$body$$", "$__timeFilter()",
        "$__timeFilter(a, b)", "$__timeGroup(t)", "$__timeFrom(x)", "[[device", "${device",
        "$__timeFilter(t", "$shape_x" /* identifiers run to their end */}) {
    EXPECT_FALSE(ExpandGrafanaSql(sql, Request()).ok()) << sql;
  }
}

// Grafana ends a macro's arguments at the first ')': nested calls would be mangled.
TEST(GrafanaSqlTest, ParenthesesInMacroArgumentsFail) {
  absl::StatusOr<std::string> out =
      ExpandGrafanaSql("$__timeFilter(to_timestamp(ms / 1000.0))", Request());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("parentheses"), std::string::npos) << out.status();
}

TEST(GrafanaSqlTest, Intervals) {
  EXPECT_EQ(*ParseGrafanaInterval("30s"), 30'000);
  EXPECT_EQ(*ParseGrafanaInterval("'2d'"), 172'800'000);
  EXPECT_EQ(*ParseGrafanaInterval("1w"), 604'800'000);
  for (const char* bad :
       {"", "m", "0s", "-5m", "5", "5M", "5y", "1.5h", "5 m", "99999999999999999999s"}) {
    EXPECT_FALSE(ParseGrafanaInterval(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace gemmprof::testing
