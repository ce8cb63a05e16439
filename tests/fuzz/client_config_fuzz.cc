// The client's config file (client/config_file.h): TOML text gives a config or one
// InvalidArgument naming the file, never a crash.
#include "client/config_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = gemmprof::client::ParseConfigFile(text, "/fuzz/gemmprof/config.toml",
                                                   std::string("/home/fuzz"));
  if (!config.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(config.status()));
    FUZZ_CHECK(config.status().message().find("config.toml") != absl::string_view::npos);
    return 0;
  }
  for (const auto& [key, entry] : config->entries) {
    FUZZ_CHECK(!key.empty());
    FUZZ_CHECK(entry.line >= 1);
  }
  return 0;
}
