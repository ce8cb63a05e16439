// gemmprof_gpu_bench [--csv PATH] [--warmup N] [--iters N] [--gpu-warmup-s S] [--quick]
//                    [--identity] [--rowwise [--autotune K]]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/gpu/gpu_bench.h"

int main(int argc, char** argv) {
  gemmprof::bench::BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--csv" && has_value) {
      options.csv_path = argv[++i];
    } else if (arg == "--warmup" && has_value) {
      options.warmup_iters = std::atoi(argv[++i]);
    } else if (arg == "--iters" && has_value) {
      options.timed_iters = std::atoi(argv[++i]);
    } else if (arg == "--gpu-warmup-s" && has_value) {
      options.gpu_warmup_s = std::atof(argv[++i]);
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--autotune" && has_value) {
      options.autotune_k = std::atoi(argv[++i]);
    } else if (arg == "--rowwise") {
      options.rowwise = true;
    } else if (arg == "--identity") {
      options.identity = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--csv PATH] [--warmup N] [--iters N] [--gpu-warmup-s S] "
                   "[--quick] [--identity] [--rowwise [--autotune K]]\n",
                   argv[0]);
      return 2;
    }
  }
  if (options.identity) {
    const absl::StatusOr<bool> ok = gemmprof::bench::RunIdentityCheck(options);
    if (!ok.ok()) {
      std::fprintf(stderr, "gemmprof_gpu_bench: %s\n", ok.status().ToString().c_str());
      return 1;
    }
    return *ok ? 0 : 1;
  }
  const absl::Status st = gemmprof::bench::RunBenchmark(options);
  if (!st.ok()) {
    std::fprintf(stderr, "gemmprof_gpu_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
