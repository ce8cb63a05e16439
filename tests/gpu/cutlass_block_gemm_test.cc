// The CUTLASS grouped FP8 block-scaled GEMM (kernels/cutlass/cutlass_gemm.h) on an sm_90
// GPU, on operands made on the host so every group can have its own size:
//   - ScaleLayoutTest: bit-level. All FP8 values are 1 and all scales 1 except ONE scale
//     set to 2, in turn at every position of every group's A and B^T scale tensors
//     (row-major, as the quantization kernels write them; each group's tensor followed
//     by a NaN, so reading past it shows): the output must be exactly K (+ the block's
//     width where that scale applies) everywhere, so each scale is applied to its rows,
//     columns and K block only.
//   - GroupSizeTest: both instantiations (B^T scales 128x128: fprop and dgrad; 1x128:
//     wgrad) against a host reference in double, per group, with M not a multiple of
//     128, M = 1, empty groups (M = 0: nothing written), K not a multiple of 128, and K
//     different per group (wgrad's K is the expert's tokens).
//   - PackedTest: groups of one size stored back to back (the runner's layout), both
//     forms (grouped; batched: one batched GEMM) against the host reference.
//   - RowwiseGemmAppliesEachRowAndColumnScale: the fp8-rowwise CUTLASS GEMM (every
//     schedule) against a host reference, and each row/column scale applied exactly
//     to its row/column; its refusals.
//   - RefusesWhatItCannotRun: FailedPrecondition with the reason (K % 16, N % 8, E5M2,
//     sm_100), never a launch.
//   - VerifierTest: the runner's verification judges each group: one group of eight 5%
//     off fails the item and is named.
//   - RunnerChoiceTest: an fp8-block item through device::Runner times both libraries,
//     says which it kept, and passes verification with it.
// Needs an sm_90 GPU and a build with CUTLASS (deploy/install_cutlass.sh); fails without.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/quant/quant.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/measure_parts.h"
#include "kernels/runner/recipe_rules.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::quant::Fp8Format;
using testing::Bf16ToHostFloat;
using ::testing::HasSubstr;
using testing::ToHost;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Size {
  int64_t m, n, k;
};

// A device copy of a host vector (a failed allocation or copy fails the test).
template <class T>
DeviceBuffer ToDevice(const std::vector<T>& v) {
  auto d = DeviceBuffer::Create(v.size() * sizeof(T));
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(cudaMemcpy(d->get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return std::move(*d);
}

// `count` E4M3 codes of 8 x normal(rng) (the caller's distribution, so two calls draw what
// one loop over both would).
std::vector<uint8_t> RandomE4m3(int64_t count, std::mt19937& rng,
                                std::normal_distribution<float>& normal) {
  std::vector<uint8_t> v;
  v.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    v.push_back(core::quant::EncodeFp8(8.0f * normal(rng), Fp8Format::kE4M3));
  return v;
}

// One group's operands on the host and the device; scales row-major and compact.
struct HostGroup {
  Size s;
  std::vector<uint8_t> a, bt;  // [m, k], [n, k]
  std::vector<float> sa, sb;   // [m, kb]; [ceil(n/128), kb] or [n, kb]
  DeviceBuffer d_a, d_bt, d_sa, d_sb, d_c;
};

// The relative RMS error of a row-wise GEMM's output `out` [m, n] against the double
// host reference a_scales[i] * bt_scales[j] * sum_k A[i, k] * B^T[j, k] (e4m3 values).
double RowwiseRelativeError(const std::vector<float>& out, const std::vector<uint8_t>& a,
                            const std::vector<uint8_t>& bt, const std::vector<float>& sa,
                            const std::vector<float>& sb, const Size& s) {
  double diff = 0, ref2 = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < s.k; ++kk) {
        acc += double(core::quant::DecodeFp8(a[i * s.k + kk], Fp8Format::kE4M3)) *
               double(core::quant::DecodeFp8(bt[j * s.k + kk], Fp8Format::kE4M3));
      }
      acc *= double(sa[i]) * double(sb[j]);
      diff += (out[i * s.n + j] - acc) * (out[i * s.n + j] - acc);
      ref2 += acc * acc;
    }
  }
  return std::sqrt(diff / ref2);
}

// The fp8-rowwise forms for one K tile per output tile (K <= 128).
bool IsOneKTile(RowwiseGemmSchedule schedule) {
  return schedule == RowwiseGemmSchedule::kOneKTile ||
         schedule == RowwiseGemmSchedule::kOneKTileCooperative;
}

class BlockGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    sm_ = p.major * 10 + p.minor;
    if (sm_ != 90) {
      GTEST_SKIP() << "these tests run the sm_90a kernels; this is sm_" << sm_
                   << " (the sm_100a grouped form is built but has not run on a Blackwell GPU)";
    }
    auto s = CudaStream::Create();
    ASSERT_TRUE(s.ok()) << s.status();
    stream_ = std::move(*s);
  }

  // Fills a group: `value(rng)` per FP8 element (E4M3), `scale(rng)` per scale.
  // bt_blk: B^T scales 128x128, else 1x128.
  template <typename Value, typename Scale>
  static HostGroup MakeGroup(Size s, bool bt_blk, std::mt19937& rng, Value value, Scale scale) {
    HostGroup g;
    g.s = s;
    const Fp8Format e4m3 = Fp8Format::kE4M3;
    for (int64_t i = 0; i < s.m * s.k; ++i) g.a.push_back(core::quant::EncodeFp8(value(rng), e4m3));
    for (int64_t i = 0; i < s.n * s.k; ++i)
      g.bt.push_back(core::quant::EncodeFp8(value(rng), e4m3));
    const int64_t kb = CeilDiv(s.k, 128);
    for (int64_t i = 0; i < s.m * kb; ++i) g.sa.push_back(scale(rng));
    for (int64_t i = 0; i < (bt_blk ? CeilDiv(s.n, 128) : s.n) * kb; ++i)
      g.sb.push_back(scale(rng));
    return g;
  }

  static float AScale(const HostGroup& g, int64_t row, int64_t kb) {
    return g.sa[row * CeilDiv(g.s.k, 128) + kb];
  }
  static float BScale(const HostGroup& g, bool bt_blk, int64_t col, int64_t kb) {
    return g.sb[(bt_blk ? col / 128 : col) * CeilDiv(g.s.k, 128) + kb];
  }

  // ||out - ref||_F / ||ref||_F of a group's output against a double host reference.
  static double RelErrorToReference(const HostGroup& g, bool bt_blk,
                                    const std::vector<float>& out) {
    const Size s = g.s;
    double diff = 0, ref2 = 0;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < s.k; ++kk) {
          acc += double(core::quant::DecodeFp8(g.a[i * s.k + kk], Fp8Format::kE4M3)) *
                 AScale(g, i, kk / 128) *
                 double(core::quant::DecodeFp8(g.bt[j * s.k + kk], Fp8Format::kE4M3)) *
                 BScale(g, bt_blk, j, kk / 128);
        }
        diff += (out[i * s.n + j] - acc) * (out[i * s.n + j] - acc);
        ref2 += acc * acc;
      }
    }
    return std::sqrt(diff / ref2);
  }

  // Uploads the groups (C filled with a sentinel) and describes them for Create.
  static BlockGemmSpec Upload(std::vector<HostGroup>& groups, bool bt_blk) {
    BlockGemmSpec spec;
    spec.bt_128x128 = bt_blk;
    for (HostGroup& g : groups) {
      auto up = [](const auto& host, DeviceBuffer* d) {
        const size_t bytes = std::max<size_t>(1, host.size() * sizeof(host[0]));
        auto b = DeviceBuffer::Create(bytes);
        EXPECT_TRUE(b.ok()) << b.status();
        *d = std::move(*b);
        if (!host.empty()) {
          EXPECT_EQ(cudaMemcpy(d->get(), host.data(), host.size() * sizeof(host[0]),
                               cudaMemcpyHostToDevice),
                    cudaSuccess);
        }
      };
      up(g.a, &g.d_a);
      up(g.bt, &g.d_bt);
      // A NaN after each scale tensor: a read past it poisons the output.
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> sa = g.sa, sb = g.sb;
      sa.push_back(nan);
      sb.push_back(nan);
      up(sa, &g.d_sa);
      up(sb, &g.d_sb);
      // 0xFFFF is a BF16 NaN: a group's C that the GEMM should not write keeps it.
      up(std::vector<uint16_t>(std::max<int64_t>(1, g.s.m * g.s.n), 0xFFFF), &g.d_c);
      BlockGemmGroup d;
      d.m = g.s.m;
      d.n = g.s.n;
      d.k = g.s.k;
      d.a = g.d_a.get();
      d.bt = g.d_bt.get();
      d.c = g.d_c.as<__nv_bfloat16>();
      d.a_scales = g.d_sa.as<float>();
      d.bt_scales = g.d_sb.as<float>();
      spec.groups.push_back(d);
    }
    return spec;
  }

  absl::Status RunOnce(const CutlassGemm& gemm) {
    RETURN_IF_ERROR(gemm.Enqueue(stream_.get()));
    if (cudaError_t e = cudaStreamSynchronize(stream_.get()); e != cudaSuccess)
      return absl::InternalError(cudaGetErrorName(e));
    return absl::OkStatus();
  }

  int sm_ = 0;
  CudaStream stream_;
};

// ---------------------------------------------------------------------------------------

struct LayoutCase {
  const char* name;
  bool bt_blk;  // B^T scales 128x128 (else 1x128)
  std::vector<Size> sizes;
  // Groups of different sizes in buffers of their own: the grouped form; one group: any
  // form (PackedTest runs every form on several groups stored back to back).
  BlockGemmSchedule schedule = BlockGemmSchedule::kGrouped;
};

// The test name: the case's name up to its first space ("blk128", "vec128_k256"), and
// the batched form's schedule ("_pingpong", "_overlapped").
std::string CaseName(const ::testing::TestParamInfo<LayoutCase>& info) {
  const std::string full = info.param.name;
  std::string name = full.substr(0, full.find(' '));
  switch (info.param.schedule) {
    case BlockGemmSchedule::kGrouped:
    case BlockGemmSchedule::kBatched:
      break;
    case BlockGemmSchedule::kBatchedPingpong:
      name += "_pingpong";
      break;
    case BlockGemmSchedule::kBatchedOverlapped:
      name += "_overlapped";
      break;
    case BlockGemmSchedule::kBatchedOverlappedPingpong:
      name += "_overlapped_pingpong";
      break;
    case BlockGemmSchedule::kBatchedConcurrentPingpong:
      name += "_concurrent_pingpong";
      break;
  }
  return name;
}

class ScaleLayoutTest : public BlockGemmTest, public ::testing::WithParamInterface<LayoutCase> {};

TEST_P(ScaleLayoutTest, EachScaleAppliesToItsRowsColumnsAndKBlockOnly) {
  const LayoutCase& c = GetParam();
  std::mt19937 rng(1);
  std::vector<HostGroup> groups;
  for (Size s : c.sizes) {
    groups.push_back(MakeGroup(
        s, c.bt_blk, rng, [](std::mt19937&) { return 1.0f; }, [](std::mt19937&) { return 1.0f; }));
  }
  BlockGemmSpec spec = Upload(groups, c.bt_blk);
  auto gemm = CutlassGemm::Create(spec, c.schedule, 0, sm_);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  SCOPED_TRACE(gemm->Description());

  // Sets one scale to 2, runs, checks every group's output exactly, sets it back.
  int checked = 0;
  auto probe = [&](size_t gi, bool of_a, int64_t index, int64_t row, int64_t col_lo, int64_t col_hi,
                   int64_t kb) {
    HostGroup& g = groups[gi];
    float* d = (of_a ? g.d_sa.as<float>() : g.d_sb.as<float>()) + index;
    const float two = 2.0f, one = 1.0f;
    ASSERT_EQ(cudaMemcpy(d, &two, sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(RunOnce(*gemm).ok());
    ASSERT_EQ(cudaMemcpy(d, &one, sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    for (size_t h = 0; h < groups.size(); ++h) {
      const Size s = groups[h].s;
      if (s.m == 0) continue;
      std::vector<float> out = Bf16ToHostFloat(groups[h].d_c.as<__nv_bfloat16>(), s.m * s.n);
      const int64_t width = std::min<int64_t>(128, s.k - kb * 128);
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          const bool hit =
              h == gi && (of_a ? i == row : true) && (of_a || (j >= col_lo && j < col_hi));
          const float want = static_cast<float>(s.k + (hit ? width : 0));
          ASSERT_EQ(out[i * s.n + j], want)
              << c.name << ": scale " << (of_a ? "A" : "B^T") << "[" << index << "] of group " << gi
              << " = 2; output group " << h << " (" << i << ", " << j << ")";
        }
      }
    }
    ++checked;
  };
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const HostGroup& g = groups[gi];
    const int64_t kb = CeilDiv(g.s.k, 128);
    for (int64_t b = 0; b < kb; ++b) {
      for (int64_t r = 0; r < g.s.m; ++r) probe(gi, true, r * kb + b, r, 0, 0, b);
      if (c.bt_blk) {
        for (int64_t rb = 0; rb < CeilDiv(g.s.n, 128); ++rb)
          probe(gi, false, rb * kb + b, -1, rb * 128, rb * 128 + 128, b);
      } else {
        for (int64_t j = 0; j < g.s.n; ++j) probe(gi, false, j * kb + b, -1, j, j + 1, b);
      }
      if (HasFatalFailure()) return;
    }
  }
  std::printf("%s: %d scale positions each applied to exactly their block (%s)\n", c.name, checked,
              gemm->Description().c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Hopper, ScaleLayoutTest,
    ::testing::Values(
        // M 3 and 5; K 320 = 2.5 blocks; N 256 = 2 row blocks of B^T; an empty group.
        LayoutCase{"blk128 (fprop, dgrad)", true, {{3, 256, 320}, {0, 256, 320}, {5, 256, 320}}},
        // 1x128 B^T scales, K different per group.
        LayoutCase{"vec128 (wgrad)", false, {{3, 24, 320}, {2, 8, 128}}},
        // The pingpong form (tile M 64: other fragments hold the scales).
        LayoutCase{"blk128", true, {{5, 256, 320}}, BlockGemmSchedule::kBatchedPingpong},
        LayoutCase{"vec128", false, {{3, 24, 320}}, BlockGemmSchedule::kBatchedPingpong},
        // The overlapped mainloop: its own promotion code reads the scales, on both
        // schedules (tile M 128 and 64: different fragments hold the scales).
        LayoutCase{"blk128", true, {{5, 256, 320}}, BlockGemmSchedule::kBatchedOverlapped},
        LayoutCase{"blk128", true, {{5, 256, 320}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        LayoutCase{"vec128", false, {{3, 24, 320}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        // The same with the warp groups' K loops at once (3 K tiles: at once).
        LayoutCase{"vec128", false, {{3, 24, 320}}, BlockGemmSchedule::kBatchedConcurrentPingpong}),
    CaseName);

// ---------------------------------------------------------------------------------------

class GroupSizeTest : public BlockGemmTest, public ::testing::WithParamInterface<LayoutCase> {};

TEST_P(GroupSizeTest, EveryGroupMatchesTheHostReference) {
  const LayoutCase& c = GetParam();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  std::vector<HostGroup> groups;
  for (Size s : c.sizes) {
    groups.push_back(MakeGroup(
        s, c.bt_blk, rng, [&](std::mt19937& r) { return 8.0f * normal(r); },
        [&](std::mt19937& r) { return std::ldexp(1.0f, exponent(r)); }));
  }
  BlockGemmSpec spec = Upload(groups, c.bt_blk);
  auto gemm = CutlassGemm::Create(spec, c.schedule, 0, sm_);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  SCOPED_TRACE(gemm->Description());
  EXPECT_THAT(gemm->Description(), HasSubstr("CUTLASS"));
  EXPECT_THAT(gemm->Description(),
              HasSubstr(absl::StrCat(c.sizes.size(), c.sizes.size() == 1 ? " group" : " groups",
                                     " in one launch")));
  ASSERT_TRUE(RunOnce(*gemm).ok());
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const HostGroup& g = groups[gi];
    const Size s = g.s;
    SCOPED_TRACE(::testing::Message()
                 << c.name << " group " << gi << " MxKxN " << s.m << "x" << s.k << "x" << s.n);
    if (s.m == 0) {
      // Nothing to write: the sentinel stays.
      EXPECT_EQ(ToHost<uint16_t>(g.d_c.get(), 1)[0], 0xFFFF);
      continue;
    }
    std::vector<float> out = Bf16ToHostFloat(g.d_c.as<__nv_bfloat16>(), s.m * s.n);
    const double rel = RelErrorToReference(g, c.bt_blk, out);
    // BF16 output rounding alone is ~1e-3 (RMS); fp32 accumulation adds little.
    EXPECT_LT(rel, 4e-3);
    std::printf("%s group %zu MxKxN %ldx%ldx%ld: rel_error %.2e\n", c.name, gi, s.m, s.k, s.n, rel);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Hopper, GroupSizeTest,
    ::testing::Values(
        // {m, n, k}: M 200, 0, 1, 128, 77; K 400 (not a multiple of 128); N 272.
        LayoutCase{
            "blk128 (fprop, dgrad)",
            true,
            {{200, 272, 400}, {0, 272, 400}, {1, 272, 400}, {128, 272, 400}, {77, 272, 400}}},
        // wgrad: M hidden, K the expert's tokens, different per group (144: not a
        // multiple of 128); N not a multiple of 128.
        LayoutCase{"vec128 (wgrad)",
                   false,
                   {{136, 264, 256}, {136, 264, 144}, {130, 264, 528}, {0, 264, 64}}},
        // The pingpong form: M 77 and 130 (not multiples of its 64 rows), K 400 and 528.
        LayoutCase{"blk128", true, {{77, 272, 400}}, BlockGemmSchedule::kBatchedPingpong},
        LayoutCase{"vec128", false, {{130, 264, 528}}, BlockGemmSchedule::kBatchedPingpong},
        // The overlapped mainloop takes K tiles two at a time: 1, 2, 4 and 5 tiles (K 128,
        // 256, 400, 528) end its loop each way; the pingpong form runs all four, the
        // cooperative one (128x128 B^T scales only) 4 and 1.
        LayoutCase{"blk128", true, {{77, 272, 400}}, BlockGemmSchedule::kBatchedOverlapped},
        LayoutCase{"blk128_k128", true, {{200, 272, 128}}, BlockGemmSchedule::kBatchedOverlapped},
        LayoutCase{"blk128", true, {{77, 272, 400}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        LayoutCase{
            "vec128", false, {{130, 264, 528}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        LayoutCase{
            "vec128_k256", false, {{136, 264, 256}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        LayoutCase{
            "blk128_k128", true, {{200, 272, 128}}, BlockGemmSchedule::kBatchedOverlappedPingpong},
        // More tiles than an H100 has SMs (17 x 17 of 64x128), so each CTA stores several
        // in turn: the epilogue of the pingpong form for 128x128 scales waits for a store
        // only before its warp group's next one, and must not write a buffer still being
        // read (deferred_store_epilogue.cuh); the 1x128 form as a check of the same sizes.
        LayoutCase{"blk128_tiles",
                   true,
                   {{1040, 2064, 256}},
                   BlockGemmSchedule::kBatchedOverlappedPingpong},
        LayoutCase{"vec128_tiles",
                   false,
                   {{1040, 2064, 256}},
                   BlockGemmSchedule::kBatchedOverlappedPingpong},
        // The concurrent form: K loops of 1, 2 and 4 tiles (both warp groups read the
        // pipeline's 8 stages together); many tiles a CTA. Longer ones are refused
        // (RefusesWhatItCannotRunWithTheReason).
        LayoutCase{
            "vec128_k128", false, {{200, 264, 128}}, BlockGemmSchedule::kBatchedConcurrentPingpong},
        LayoutCase{
            "vec128_k256", false, {{136, 264, 256}}, BlockGemmSchedule::kBatchedConcurrentPingpong},
        LayoutCase{
            "vec128_k512", false, {{130, 264, 512}}, BlockGemmSchedule::kBatchedConcurrentPingpong},
        LayoutCase{"vec128_tiles",
                   false,
                   {{1040, 2064, 256}},
                   BlockGemmSchedule::kBatchedConcurrentPingpong}),
    CaseName);

// ---------------------------------------------------------------------------------------

TEST_F(BlockGemmTest, RefusesWhatItCannotRunWithTheReason) {
  std::mt19937 rng(3);
  auto one = [](std::mt19937&) { return 1.0f; };
  struct Refusal {
    Size s;
    Fp8Format fa, fb;
    const char* says;
  };
  const Refusal cases[] = {
      {{64, 256, 120}, Fp8Format::kE4M3, Fp8Format::kE4M3, "K % 16 == 0"},
      {{64, 260, 128}, Fp8Format::kE4M3, Fp8Format::kE4M3, "N % 8 == 0"},
      {{64, 256, 128}, Fp8Format::kE5M2, Fp8Format::kE4M3, "no CUTLASS grouped"},
      {{64, 256, 128}, Fp8Format::kE4M3, Fp8Format::kE5M2, "A e4m3 x B^T e5m2"},
  };
  for (const Refusal& r : cases) {
    std::vector<HostGroup> groups;
    groups.push_back(MakeGroup(r.s, true, rng, one, one));
    BlockGemmSpec spec = Upload(groups, true);
    spec.a_format = r.fa;
    spec.bt_format = r.fb;
    auto gemm = CutlassGemm::Create(spec, BlockGemmSchedule::kGrouped, 0, sm_);
    ASSERT_FALSE(gemm.ok()) << r.says;
    EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition) << gemm.status();
    EXPECT_THAT(std::string(gemm.status().message()), HasSubstr(r.says));
  }
  BlockGemmSpec none;
  EXPECT_EQ(CutlassGemm::Create(none, BlockGemmSchedule::kGrouped, 0, sm_).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<HostGroup> groups;
  groups.push_back(MakeGroup({64, 256, 128}, true, rng, one, one));
  BlockGemmSpec spec = Upload(groups, true);
  // Blackwell: the grouped form only (its sm_100a build, not run here); other devices none.
  auto blackwell = CutlassGemm::Create(spec, BlockGemmSchedule::kBatched, 0, 100);
  EXPECT_EQ(blackwell.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(blackwell.status().message()),
              HasSubstr("batched block-scaled GEMM is built for sm_90a only; this is sm_100"));
  auto other = CutlassGemm::Create(spec, BlockGemmSchedule::kGrouped, 0, 120);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("grouped block-scaled GEMM is built for sm_90a and sm_100a only; this is "
                        "sm_120"));
  // The concurrent form: 1x128 B^T scales only, and K loops of at most 4 tiles (K 528 is
  // 5); K 512 runs.
  auto blk = CutlassGemm::Create(spec, BlockGemmSchedule::kBatchedConcurrentPingpong, 0, sm_);
  EXPECT_EQ(blk.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(blk.status().message()), HasSubstr("1x128 B^T scales only"));
  for (const int k : {528, 512}) {
    std::vector<HostGroup> vec;
    vec.push_back(MakeGroup({64, 256, k}, false, rng, one, one));
    BlockGemmSpec vec_spec = Upload(vec, false);
    auto long_k =
        CutlassGemm::Create(vec_spec, BlockGemmSchedule::kBatchedConcurrentPingpong, 0, sm_);
    if (k == 512) {
      EXPECT_TRUE(long_k.ok()) << long_k.status();
      continue;
    }
    EXPECT_EQ(long_k.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(long_k.status().message()),
                HasSubstr("run at once only up to K = 512 (4 K tiles, half its stages); this K is "
                          "528"));
  }
}

// ---------------------------------------------------------------------------------------

// Groups of one size stored back to back, as the runner stores them: the batched form
// and the grouped form each against the host reference; the batched form refuses groups
// that are not packed.
class PackedTest : public BlockGemmTest, public ::testing::WithParamInterface<bool> {};

TEST_P(PackedTest, BatchedAndGroupedFormsMatchTheHostReference) {
  const bool bt_blk = GetParam();
  const Size s{77, 264, 400};  // M not a multiple of 128, K not a multiple of 128
  const int groups = 4;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  std::vector<HostGroup> host;
  std::vector<uint8_t> a, bt;
  std::vector<float> sa, sb;
  for (int g = 0; g < groups; ++g) {
    host.push_back(MakeGroup(
        s, bt_blk, rng, [&](std::mt19937& r) { return 8.0f * normal(r); },
        [&](std::mt19937& r) { return std::ldexp(1.0f, exponent(r)); }));
    a.insert(a.end(), host.back().a.begin(), host.back().a.end());
    bt.insert(bt.end(), host.back().bt.begin(), host.back().bt.end());
    sa.insert(sa.end(), host.back().sa.begin(), host.back().sa.end());
    sb.insert(sb.end(), host.back().sb.begin(), host.back().sb.end());
  }
  DeviceBuffer d_a = ToDevice(a), d_bt = ToDevice(bt), d_sa = ToDevice(sa), d_sb = ToDevice(sb);
  auto d_c = DeviceBuffer::Create(groups * s.m * s.n * 2);
  ASSERT_TRUE(d_c.ok());
  BlockGemmSpec spec;
  spec.bt_128x128 = bt_blk;
  for (int g = 0; g < groups; ++g) {
    BlockGemmGroup one;
    one.m = s.m;
    one.n = s.n;
    one.k = s.k;
    one.a = d_a.as<uint8_t>() + g * s.m * s.k;
    one.bt = d_bt.as<uint8_t>() + g * s.n * s.k;
    one.c = d_c->as<__nv_bfloat16>() + g * s.m * s.n;
    one.a_scales = d_sa.as<float>() + g * host[g].sa.size();
    one.bt_scales = d_sb.as<float>() + g * host[g].sb.size();
    spec.groups.push_back(one);
  }
  for (BlockGemmSchedule schedule : kBlockGemmSchedules) {
    ASSERT_EQ(cudaMemset(d_c->get(), 0xFF, groups * s.m * s.n * 2), cudaSuccess);
    auto gemm = CutlassGemm::Create(spec, schedule, 0, sm_);
    if (!bt_blk && schedule == BlockGemmSchedule::kBatchedOverlapped) {
      // Not instantiated for 1x128 B^T scales: refused with the reason.
      EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(gemm.status().message(), HasSubstr("128x128 B^T scales only"));
      continue;
    }
    if (bt_blk && schedule == BlockGemmSchedule::kBatchedConcurrentPingpong) {
      // Not instantiated for 128x128 B^T scales: refused with the reason.
      EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(gemm.status().message(), HasSubstr("1x128 B^T scales only"));
      continue;
    }
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    SCOPED_TRACE(gemm->Description());
    ASSERT_TRUE(RunOnce(*gemm).ok());
    for (int g = 0; g < groups; ++g) {
      const HostGroup& h = host[g];
      std::vector<float> out = Bf16ToHostFloat(d_c->as<__nv_bfloat16>() + g * s.m * s.n, s.m * s.n);
      EXPECT_LT(RelErrorToReference(h, bt_blk, out), 4e-3) << "group " << g;
    }
    std::printf("packed %s: %s\n", bt_blk ? "blk128" : "vec128", gemm->Description().c_str());
  }
  // Not packed (group 2's A elsewhere): the batched form refuses, with the reason.
  spec.groups[2].a = d_a.as<uint8_t>();
  auto refused = CutlassGemm::Create(spec, BlockGemmSchedule::kBatched, 0, sm_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("group 2 is not"));
}

INSTANTIATE_TEST_SUITE_P(Hopper, PackedTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "blk128" : "vec128"; });

// ---------------------------------------------------------------------------------------

// fp8-rowwise: C[i, j] = a_scales[i] * bt_scales[j] * sum_k A[i, k] * B^T[j, k], each
// schedule and both accumulations, M 77 (not a multiple of either tile), K 320, N 264:
// against a double host reference, then each row's and each column's scale set to 2 in
// turn (FP8 values 1, other scales 1: exact outputs) so every scale applies to its row or
// column only.
TEST_F(BlockGemmTest, RowwiseGemmAppliesEachRowAndColumnScale) {
  const Size s{77, 264, 320};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  const std::vector<uint8_t> a = RandomE4m3(s.m * s.k, rng, normal);
  const std::vector<uint8_t> bt = RandomE4m3(s.n * s.k, rng, normal);
  std::vector<float> sa, sb;
  for (int64_t i = 0; i < s.m; ++i) sa.push_back(std::ldexp(1.0f, exponent(rng)));
  for (int64_t j = 0; j < s.n; ++j) sb.push_back(std::ldexp(1.0f, exponent(rng)));
  DeviceBuffer d_a = ToDevice(a), d_bt = ToDevice(bt), d_sa = ToDevice(sa), d_sb = ToDevice(sb);
  auto d_c = DeviceBuffer::Create(s.m * s.n * 2);
  ASSERT_TRUE(d_c.ok());
  RowwiseGemmSpec spec;
  spec.groups.push_back({s.m, s.n, s.k, d_a.get(), d_bt.get(), d_c->as<__nv_bfloat16>(),
                         d_sa.as<float>(), d_sb.as<float>()});
  for (const bool fast : {true, false}) {
    spec.fast_accum = fast;
    for (RowwiseGemmSchedule schedule : kRowwiseGemmSchedules) {
      SCOPED_TRACE(absl::StrCat(RowwiseGemmScheduleName(schedule), fast ? " fast" : " split"));
      auto gemm = CutlassGemm::CreateRowwise(spec, schedule, 0, sm_);
      if (schedule == RowwiseGemmSchedule::kGrouped) {
        // One GEMM: the tile forms run it.
        EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_THAT(std::string(gemm.status().message()), HasSubstr("several groups"));
        continue;
      }
      if (IsFastOnlyRowwise(schedule) && !fast) {
        EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_THAT(std::string(gemm.status().message()),
                    HasSubstr("this GEMM promotes partial sums to fp32"));
        continue;
      }
      if (IsPromotedRowwise(schedule) && fast) {
        // Scales at promotion: there is no promotion with fast accumulation.
        EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_THAT(std::string(gemm.status().message()),
                    HasSubstr("this GEMM uses FP8 fast accumulation"));
        continue;
      }
      if (IsOneKTile(schedule)) {
        // K 320 is three K tiles (RowwiseOneKTileFormsEqualThePromotedForm runs them).
        EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_THAT(std::string(gemm.status().message()),
                    HasSubstr("one K tile per output tile: K up to 128; this K is 320"));
        continue;
      }
      ASSERT_TRUE(gemm.ok()) << gemm.status();
      EXPECT_THAT(
          gemm->Description(),
          HasSubstr(IsPromotedRowwise(schedule)                ? "tile 64x128x128, cluster 1x1x1"
                    : schedule == RowwiseGemmSchedule::kTile64 ? "tile 64x128x128, cluster 1x2x1"
                    : schedule == RowwiseGemmSchedule::kTile128N ||
                            schedule == RowwiseGemmSchedule::kCooperative
                        ? "tile 128x128x128, cluster 1x2x1"
                    : schedule == RowwiseGemmSchedule::kCooperativeSolo ||
                            schedule == RowwiseGemmSchedule::kTile128Solo
                        ? "tile 128x128x128, cluster 1x1x1"
                        : "tile 128x128x128, cluster 2x1x1"));
      EXPECT_THAT(gemm->Description(),
                  HasSubstr(IsPromotedRowwise(schedule) ? "at each K tile" : "in the epilogue"));
      EXPECT_THAT(gemm->Description(),
                  HasSubstr(fast ? "FP8 fast accumulation" : "partial sums promoted to fp32"));
      EXPECT_EQ(gemm->Description().find("swizzle 8") != std::string::npos,
                schedule == RowwiseGemmSchedule::kTile128Swizzle8);
      // Random values: the host reference in double.
      ASSERT_EQ(cudaMemcpy(d_a.get(), a.data(), a.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_bt.get(), bt.data(), bt.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_sa.get(), sa.data(), sa.size() * 4, cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_sb.get(), sb.data(), sb.size() * 4, cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_TRUE(RunOnce(*gemm).ok());
      std::vector<float> out = Bf16ToHostFloat(d_c->as<__nv_bfloat16>(), s.m * s.n);
      const double rel = RowwiseRelativeError(out, a, bt, sa, sb, s);
      // BF16 rounding (~1e-3 RMS) plus FP8 fast accumulation.
      EXPECT_LT(rel, 1e-2);
      // Values 1, scales 1 but one: the output is K, twice that on the scaled row/column.
      const uint8_t one = core::quant::EncodeFp8(1.0f, Fp8Format::kE4M3);
      std::vector<uint8_t> ones_a_v(s.m * s.k, one), ones_bt_v(s.n * s.k, one);
      std::vector<float> unit_a(s.m, 1.0f), unit_b(s.n, 1.0f);
      ASSERT_EQ(cudaMemcpy(d_a.get(), ones_a_v.data(), ones_a_v.size(), cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaMemcpy(d_bt.get(), ones_bt_v.data(), ones_bt_v.size(), cudaMemcpyHostToDevice),
                cudaSuccess);
      int checked = 0;
      for (int side = 0; side < 2; ++side) {
        const int64_t count = side == 0 ? s.m : s.n;
        for (int64_t p = 0; p < count; ++p) {
          std::vector<float> ua = unit_a, ub = unit_b;
          (side == 0 ? ua[p] : ub[p]) = 2.0f;
          ASSERT_EQ(cudaMemcpy(d_sa.get(), ua.data(), ua.size() * 4, cudaMemcpyHostToDevice),
                    cudaSuccess);
          ASSERT_EQ(cudaMemcpy(d_sb.get(), ub.data(), ub.size() * 4, cudaMemcpyHostToDevice),
                    cudaSuccess);
          ASSERT_TRUE(RunOnce(*gemm).ok());
          std::vector<float> o = Bf16ToHostFloat(d_c->as<__nv_bfloat16>(), s.m * s.n);
          for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t j = 0; j < s.n; ++j) {
              const bool hit = side == 0 ? i == p : j == p;
              ASSERT_EQ(o[i * s.n + j], static_cast<float>(hit ? 2 * s.k : s.k))
                  << (side == 0 ? "A" : "B^T") << " scale " << p << " = 2; output (" << i << ", "
                  << j << ")";
            }
          }
          ++checked;
        }
      }
      std::printf(
          "row-wise %s: rel_error %.2e, %d row/column scales each applied to exactly "
          "their row or column (%s)\n",
          RowwiseGemmScheduleName(schedule), rel, checked, gemm->Description().c_str());
    }
  }
  // What it cannot run: FailedPrecondition with the reason, never a launch.
  RowwiseGemmSpec odd = spec;
  odd.groups[0].n = 260;
  auto refused = CutlassGemm::CreateRowwise(odd, RowwiseGemmSchedule::kTile128, 0, sm_);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("N % 8 == 0"));
  refused = CutlassGemm::CreateRowwise(spec, RowwiseGemmSchedule::kTile64, 0, 100);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("sm_90a only"));
  RowwiseGemmSpec long_k = spec;
  long_k.fast_accum = false;
  long_k.groups[0].k = 640;  // never launched: refused before
  refused = CutlassGemm::CreateRowwise(long_k, RowwiseGemmSchedule::kPromotedConcurrent, 0, sm_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("run at once only up to K = 512 (4 K tiles, half its stages); this K is "
                        "640"));
  for (RowwiseGemmSchedule one :
       {RowwiseGemmSchedule::kOneKTile, RowwiseGemmSchedule::kOneKTileCooperative}) {
    refused = CutlassGemm::CreateRowwise(long_k, one, 0, sm_);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("one K tile per output tile: K up to 128; this K is 640"));
  }
  RowwiseGemmSpec empty;
  EXPECT_EQ(
      CutlassGemm::CreateRowwise(empty, RowwiseGemmSchedule::kTile128, 0, sm_).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// The one-K-tile forms (K <= 128: the tile's WGMMAs straight into the accumulator, scaled
// in place) against the 64x128 form that promotes onto a cleared accumulator: the same
// output bits (a -0 sum is +0 in both), and within 1e-2 of the double host reference. Three
// groups back to back (each group's scales at its own offset), M 200 (not a multiple of
// either tile), K 128 and 112 (one partial K tile), scales not powers of two (so the order
// of the products shows).
TEST_F(BlockGemmTest, RowwiseOneKTileFormsEqualThePromotedForm) {
  const int64_t groups = 3, m = 200, n = 264;
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> scale(0.3f, 3.0f);
  for (const int64_t k : {int64_t{128}, int64_t{112}}) {
    SCOPED_TRACE(absl::StrCat("K ", k));
    const std::vector<uint8_t> a = RandomE4m3(groups * m * k, rng, normal);
    const std::vector<uint8_t> bt = RandomE4m3(groups * n * k, rng, normal);
    std::vector<float> sa, sb;
    for (int64_t i = 0; i < groups * m; ++i) sa.push_back(scale(rng));
    for (int64_t j = 0; j < groups * n; ++j) sb.push_back(scale(rng));
    DeviceBuffer d_a = ToDevice(a), d_bt = ToDevice(bt), d_sa = ToDevice(sa), d_sb = ToDevice(sb);
    auto d_c = DeviceBuffer::Create(groups * m * n * 2);
    ASSERT_TRUE(d_c.ok());
    RowwiseGemmSpec spec;
    spec.fast_accum = false;
    for (int64_t g = 0; g < groups; ++g) {
      spec.groups.push_back({m, n, k, d_a.as<uint8_t>() + g * m * k, d_bt.as<uint8_t>() + g * n * k,
                             d_c->as<__nv_bfloat16>() + g * m * n, d_sa.as<float>() + g * m,
                             d_sb.as<float>() + g * n});
    }
    auto run = [&](RowwiseGemmSchedule schedule, std::vector<uint16_t>* bits) {
      auto gemm = CutlassGemm::CreateRowwise(spec, schedule, 0, sm_);
      ASSERT_TRUE(gemm.ok()) << RowwiseGemmScheduleName(schedule) << ": " << gemm.status();
      ASSERT_EQ(cudaMemset(d_c->get(), 0xff, groups * m * n * 2), cudaSuccess);
      ASSERT_TRUE(RunOnce(*gemm).ok());
      bits->resize(groups * m * n);
      ASSERT_EQ(cudaMemcpy(bits->data(), d_c->get(), bits->size() * 2, cudaMemcpyDeviceToHost),
                cudaSuccess);
      for (uint16_t& b : *bits) {
        if (b == 0x8000) b = 0;  // -0 and +0 alike
      }
      for (int64_t g = 0; g < groups; ++g) {
        std::vector<float> out = Bf16ToHostFloat(d_c->as<__nv_bfloat16>() + g * m * n, m * n);
        const Size s{m, n, k};
        const std::vector<uint8_t> ga(a.begin() + g * m * k, a.begin() + (g + 1) * m * k);
        const std::vector<uint8_t> gbt(bt.begin() + g * n * k, bt.begin() + (g + 1) * n * k);
        const std::vector<float> gsa(sa.begin() + g * m, sa.begin() + (g + 1) * m);
        const std::vector<float> gsb(sb.begin() + g * n, sb.begin() + (g + 1) * n);
        EXPECT_LT(RowwiseRelativeError(out, ga, gbt, gsa, gsb, s), 1e-2)
            << RowwiseGemmScheduleName(schedule) << ", group " << g;
      }
      std::printf("row-wise %s, K %lld: %s\n", RowwiseGemmScheduleName(schedule),
                  static_cast<long long>(k), gemm->Description().c_str());
    };
    std::vector<uint16_t> promoted, one;
    run(RowwiseGemmSchedule::kPromoted, &promoted);
    for (RowwiseGemmSchedule schedule :
         {RowwiseGemmSchedule::kOneKTile, RowwiseGemmSchedule::kOneKTileCooperative}) {
      run(schedule, &one);
      int64_t differ = 0;
      for (size_t i = 0; i < one.size(); ++i) differ += one[i] != promoted[i];
      EXPECT_EQ(differ, 0) << RowwiseGemmScheduleName(schedule) << ": outputs whose bits differ "
                           << "from the promoted 64x128 form's";
    }
  }
}

// MoE experts in one launch: five experts with their own operands and row/column scales
// (random powers of two, different per expert), both accumulations. The batched forms
// run five experts of 77 tokens stored back to back; the grouped form runs the experts
// as routing leaves them, 77, 0, 130, 5 and 64 tokens (the empty expert's output, its
// neighbours' rows on either side, is untouched). Every expert against the double host
// reference, so a scale read at another expert's offset shows.
TEST_F(BlockGemmTest, RowwiseGemmRunsEveryExpertWithItsOwnScales) {
  const int64_t n = 264, k = 320, capacity = 130;
  const std::vector<int64_t> batched_rows = {77, 77, 77, 77, 77};
  const std::vector<int64_t> routed_rows = {77, 0, 130, 5, 64};
  const int64_t experts = 5;
  std::mt19937 rng(19);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  const std::vector<uint8_t> a = RandomE4m3(experts * capacity * k, rng, normal);
  const std::vector<uint8_t> bt = RandomE4m3(experts * n * k, rng, normal);
  std::vector<float> sa, sb;
  for (int64_t i = 0; i < experts * capacity; ++i) sa.push_back(std::ldexp(1.0f, exponent(rng)));
  for (int64_t j = 0; j < experts * n; ++j) sb.push_back(std::ldexp(1.0f, exponent(rng)));
  DeviceBuffer d_a = ToDevice(a), d_bt = ToDevice(bt), d_sa = ToDevice(sa), d_sb = ToDevice(sb);
  auto d_c = DeviceBuffer::Create(experts * capacity * n * 2);
  ASSERT_TRUE(d_c.ok());
  for (const bool grouped : {false, true}) {
    const std::vector<int64_t>& rows = grouped ? routed_rows : batched_rows;
    // Experts back to back at their own row counts (the contiguous layout).
    RowwiseGemmSpec spec;
    std::vector<int64_t> first_row;
    int64_t row = 0;
    for (int64_t e = 0; e < experts; ++e) {
      first_row.push_back(row);
      spec.groups.push_back({rows[e], n, k, d_a.as<uint8_t>() + row * k,
                             d_bt.as<uint8_t>() + e * n * k, d_c->as<__nv_bfloat16>() + row * n,
                             d_sa.as<float>() + row, d_sb.as<float>() + e * n});
      row += rows[e];
    }
    for (const bool fast : {true, false}) {
      spec.fast_accum = fast;
      for (RowwiseGemmSchedule schedule : kRowwiseGemmSchedules) {
        if ((schedule == RowwiseGemmSchedule::kGrouped) != grouped) continue;
        SCOPED_TRACE(absl::StrCat(RowwiseGemmScheduleName(schedule), fast ? " fast" : " split"));
        auto gemm = CutlassGemm::CreateRowwise(spec, schedule, 0, sm_);
        if ((IsPromotedRowwise(schedule) && fast) || (IsFastOnlyRowwise(schedule) && !fast) ||
            IsOneKTile(schedule)) {
          EXPECT_EQ(gemm.status().code(), absl::StatusCode::kFailedPrecondition);
          continue;
        }
        ASSERT_TRUE(gemm.ok()) << gemm.status();
        EXPECT_THAT(gemm->Description(), HasSubstr("5 groups in one launch"));
        const uint16_t sentinel = 0x7fc1;  // a BF16 NaN no GEMM writes
        std::vector<uint16_t> fill(experts * capacity * n, sentinel);
        ASSERT_EQ(cudaMemcpy(d_c->get(), fill.data(), fill.size() * 2, cudaMemcpyHostToDevice),
                  cudaSuccess);
        ASSERT_TRUE(RunOnce(*gemm).ok());
        std::vector<uint16_t> raw(fill.size());
        ASSERT_EQ(cudaMemcpy(raw.data(), d_c->get(), raw.size() * 2, cudaMemcpyDeviceToHost),
                  cudaSuccess);
        for (int64_t i = row * n; i < static_cast<int64_t>(raw.size()); ++i)
          ASSERT_EQ(raw[i], sentinel) << "written past the last expert's rows at " << i;
        for (int64_t e = 0; e < experts; ++e) {
          if (rows[e] == 0) continue;
          const Size s{rows[e], n, k};
          const int64_t r0 = first_row[e];
          std::vector<float> out = Bf16ToHostFloat(d_c->as<__nv_bfloat16>() + r0 * n, s.m * s.n);
          const std::vector<uint8_t> ea(a.begin() + r0 * k, a.begin() + (r0 + s.m) * k);
          const std::vector<uint8_t> ebt(bt.begin() + e * n * k, bt.begin() + (e + 1) * n * k);
          const std::vector<float> esa(sa.begin() + r0, sa.begin() + r0 + s.m);
          const std::vector<float> esb(sb.begin() + e * n, sb.begin() + (e + 1) * n);
          const double rel = RowwiseRelativeError(out, ea, ebt, esa, esb, s);
          EXPECT_LT(rel, 1e-2) << "expert " << e << " (" << s.m << " tokens)";
        }
        std::printf("row-wise experts %s %s: every expert within 1e-2 (%s)\n",
                    RowwiseGemmScheduleName(schedule), fast ? "fast" : "split",
                    gemm->Description().c_str());
      }
    }
  }
  // Sizes the batched forms cannot take: with the reason.
  RowwiseGemmSpec uneven;
  uneven.groups.push_back({77, n, k, d_a.get(), d_bt.get(), d_c->as<__nv_bfloat16>(),
                           d_sa.as<float>(), d_sb.as<float>()});
  uneven.groups.push_back({5, n, k, d_a.as<uint8_t>() + 77 * k, d_bt.as<uint8_t>() + n * k,
                           d_c->as<__nv_bfloat16>() + 77 * n, d_sa.as<float>() + 77,
                           d_sb.as<float>() + n});
  auto refused = CutlassGemm::CreateRowwise(uneven, RowwiseGemmSchedule::kTile128, 0, sm_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("group 1 is not"));
  // Blackwell's grouped form exists in this build but no Blackwell GPU runs here.
  refused = CutlassGemm::CreateRowwise(uneven, RowwiseGemmSchedule::kTile128, 0, 100);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("sm_90a only; this is sm_100"));
}

// ---------------------------------------------------------------------------------------

class VerifierTest : public testing::LtSuite<::testing::Test> {};

TEST_F(VerifierTest, OneWrongGroupOfEightFailsTheItemAndIsNamed) {
  const core::GemmShape s{256, 512, 384};
  const int64_t groups = 8;
  core::WorkItem item;
  item.op.pass = core::Pass::kFprop;
  item.op.shape = s;
  item.op.groups = groups;
  item.recipe = core::Recipe::kFp8Block;
  const core::TimingOptions timing;
  const cudaStream_t st = stream_.get();
  DevicePool pool;
  auto a_src = pool.GetAs<__nv_bfloat16>("a.src", groups * s.m * s.k);
  auto bt_src = pool.GetAs<__nv_bfloat16>("bt.src", groups * s.n * s.k);
  auto c = pool.GetAs<__nv_bfloat16>("c", groups * s.m * s.n);
  ASSERT_TRUE(a_src.ok() && bt_src.ok() && c.ok());
  ASSERT_EQ(FillRandomNormalBf16(*a_src, groups * s.m * s.k, 5, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*bt_src, groups * s.n * s.k, 5, 2, st), cudaSuccess);
  auto qa = OperandQuantizer::Create(pool, OperandA(item, timing), *a_src, false);
  auto qb = OperandQuantizer::Create(pool, OperandBt(item, timing), *bt_src, false);
  ASSERT_TRUE(qa.ok() && qb.ok());
  ASSERT_TRUE(qa->Enqueue(st, false).ok() && qb->Enqueue(st, false).ok());
  // The groups as the runner lays them out for CUTLASS (CreateBlockGemm).
  const Operands o{*c, nullptr, *qa, *qb};
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  auto gemm = CreateBlockGemm(item, o, BlockGemmSchedule::kGrouped, 0, p.major * 10 + p.minor);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  ASSERT_TRUE(gemm->Enqueue(st).ok());
  const double threshold = ErrorThreshold(core::Recipe::kFp8Block, false);
  auto right = VerifyGemm(lt_.get(), pool, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                          workspace_.get(), workspace_.bytes(), st);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_EQ(right->verdict, core::Verification::kPassed) << right->rel_error << right->note;

  // Group 5 five percent off: over all eight groups that is ~1.8%, under the 2% bound.
  const int64_t bad = 5, n = s.m * s.n;
  std::vector<__nv_bfloat16> h = ToHost<__nv_bfloat16>(*c + bad * n, n);
  for (auto& v : h) v = __float2bfloat16(__bfloat162float(v) * 1.05f);
  ASSERT_EQ(cudaMemcpy(*c + bad * n, h.data(), n * sizeof(h[0]), cudaMemcpyHostToDevice),
            cudaSuccess);
  auto wrong = VerifyGemm(lt_.get(), pool, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                          workspace_.get(), workspace_.bytes(), st);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->verdict, core::Verification::kIncorrect) << wrong->rel_error;
  EXPECT_GT(wrong->rel_error, 0.04);
  EXPECT_THAT(wrong->note, HasSubstr("1 of 8 groups wrong (worst: group 5)"));
  std::printf("verifier: right %.2e, one group 5%% off %.2e (%s)\n", right->rel_error,
              wrong->rel_error, wrong->note.c_str());
}

// ---------------------------------------------------------------------------------------

class RunnerChoiceTest : public testing::RunnerSuite {
 protected:
  // An fp8-block prequant expert item of 512x2048x768 per group.
  static core::WorkItem ExpertItem(core::Pass pass, int64_t groups) {
    core::WorkItem item;
    item.id = 21;
    item.op.name = "expert_up";
    item.op.pass = pass;
    item.op.shape = {512, 2048, 768};
    item.op.groups = groups;
    item.recipe = core::Recipe::kFp8Block;
    item.mode = core::Mode::kPrequant;
    return item;
  }
};

TEST_F(RunnerChoiceTest, Fp8BlockItemsTimeBothLibrariesAndKeepTheFaster) {
  core::TimingOptions t;
  t.warmup_iters = 3;
  t.timed_iters = 10;
  t.gpu_warmup_s = 0;
  for (core::Pass pass : {core::Pass::kFprop, core::Pass::kDgrad, core::Pass::kWgrad}) {
    for (int64_t groups : {1, 8}) {
      auto m = device::MeasureOne(*runner_, ExpertItem(pass, groups), t);
      ASSERT_TRUE(m.ok()) << m.status();
      SCOPED_TRACE(m->notes);
      EXPECT_EQ(m->verification, core::Verification::kPassed) << m->rel_error;
      EXPECT_THAT(m->notes, HasSubstr("GEMM library chosen by measurement: "));
      const bool cutlass = m->notes.find("chosen by measurement: CUTLASS") != std::string::npos;
      EXPECT_EQ(cutlass, m->algorithm.find("CUTLASS") != std::string::npos) << m->algorithm;
      if (cutlass && groups > 1) {
        EXPECT_THAT(m->notes, HasSubstr("grouped: 8 groups in one CUTLASS launch"));
      }
      std::printf("fp8-block %s x%ld: %.4f ms, %s\n", std::string(core::ToString(pass)).c_str(),
                  groups, m->time.median_ms, m->algorithm.c_str());
    }
  }
}

// With the margin widened, every CUTLASS form that runs contends in the item's rounds:
// the contest runs, its ratios are noted, and the member reports the kept form's series
// (its algorithm is that form's) with a verified output.
TEST_F(RunnerChoiceTest, CloseCutlassFormsContendInTheItemsRoundsAndTheFasterIsKept) {
  auto* cuda = dynamic_cast<CudaRunner*>(runner_.get());
  ASSERT_NE(cuda, nullptr);
  struct Restore {
    CudaRunner* r;
    ~Restore() { r->set_contender_margin(CudaRunner::kDefaultContenderMargin); }
  } restore{cuda};
  cuda->set_contender_margin(10.0);
  core::TimingOptions t;
  t.warmup_iters = 3;
  t.timed_iters = 12;
  t.gpu_warmup_s = 0;
  for (core::Pass pass : {core::Pass::kFprop, core::Pass::kWgrad}) {
    auto m = device::MeasureOne(*runner_, ExpertItem(pass, 16), t);
    ASSERT_TRUE(m.ok()) << m.status();
    SCOPED_TRACE(m->notes);
    EXPECT_EQ(m->verification, core::Verification::kPassed) << m->rel_error;
    ASSERT_THAT(m->notes, HasSubstr("chosen by measurement: CUTLASS"));
    EXPECT_THAT(m->notes, HasSubstr("timed in the item's own rounds beside it"));
    EXPECT_THAT(m->notes, HasSubstr("paired over 12 rounds"));
    EXPECT_EQ(m->isolated.rounds, 12);
    EXPECT_GT(m->b2b.rounds, 0);
    const std::string marker = "kept after the item's own rounds: ";
    const size_t at = m->notes.find(marker);
    ASSERT_NE(at, std::string::npos);
    const std::string kept =
        m->notes.substr(at + marker.size(), m->notes.find(" (", at) - at - marker.size());
    // The algorithm is the kept form's (CutlassGemm::Description names its schedule; the
    // concurrent form runs the overlapped promotion too).
    auto named = [&kept](const char* word) { return kept.find(word) != std::string::npos; };
    EXPECT_EQ(named("pingpong"), m->algorithm.find("Pingpong") != std::string::npos)
        << kept << " | " << m->algorithm;
    EXPECT_EQ(named("overlapped") || named("concurrent"),
              m->algorithm.find("promotion overlapped") != std::string::npos)
        << kept << " | " << m->algorithm;
    EXPECT_EQ(named("concurrent"), m->algorithm.find("mainloops concurrent") != std::string::npos)
        << kept << " | " << m->algorithm;
    std::printf("fp8-block %s x16 contest: kept %s, %.4f ms (%s)\n",
                std::string(core::ToString(pass)).c_str(), kept.c_str(), m->time.median_ms,
                m->algorithm.c_str());
  }
}

}  // namespace
}  // namespace gemmprof::kernels
