// CUTLASS as deploy/install_cutlass.sh installs it and cmake/FindCutlass.cmake finds it:
// the pinned release, with the Hopper collectives issue 12's kernels are built from and
// the util headers (packed strides) their host code needs. Host-only: no GPU, no nvcc.
#include <gtest/gtest.h>

#include <cutlass/version.h>

namespace {

// Grouped (pointer-array) and dense FP8 blockwise collectives for sm_90, and the util
// headers from tools/util/include.
#if __has_include(<cutlass/gemm/collective/sm90_mma_array_tma_gmma_ss_warpspecialized_fp8_blockwise_scaling.hpp>)
constexpr bool kGroupedBlockwise = true;
#else
constexpr bool kGroupedBlockwise = false;
#endif
#if __has_include(<cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized_fp8_blockwise_scaling.hpp>)
constexpr bool kDenseBlockwise = true;
#else
constexpr bool kDenseBlockwise = false;
#endif
#if __has_include(<cutlass/util/packed_stride.hpp>)
constexpr bool kUtil = true;
#else
constexpr bool kUtil = false;
#endif

TEST(CutlassDependencyTest, ThePinnedReleaseWithItsHopperBlockwiseCollectives) {
  EXPECT_EQ(CUTLASS_MAJOR, 4);
  EXPECT_EQ(CUTLASS_MINOR, 2);
  EXPECT_TRUE(kGroupedBlockwise);
  EXPECT_TRUE(kDenseBlockwise);
  EXPECT_TRUE(kUtil);
}

}  // namespace
