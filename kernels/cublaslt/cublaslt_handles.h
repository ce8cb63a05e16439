// Move-only RAII owners of cuBLASLt objects: the library handle and the matmul,
// matrix-layout and preference descriptors, with typed attribute setters that return
// a Status naming the attribute.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace gemmprof::kernels {

template <typename T, cublasStatus_t (*Destroy)(T)>
class UniqueLtHandle {
 public:
  UniqueLtHandle() = default;
  explicit UniqueLtHandle(T h) : h_(h) {}
  ~UniqueLtHandle() {
    if (h_ != nullptr) (void)Destroy(h_);
  }
  UniqueLtHandle(UniqueLtHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  UniqueLtHandle& operator=(UniqueLtHandle&& o) noexcept {
    if (this != &o) {
      if (h_ != nullptr) (void)Destroy(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  UniqueLtHandle(const UniqueLtHandle&) = delete;
  UniqueLtHandle& operator=(const UniqueLtHandle&) = delete;
  T get() const { return h_; }

 private:
  T h_ = nullptr;
};

// The cuBLASLt library context of one device.
class LtHandle {
 public:
  LtHandle() = default;
  static absl::StatusOr<LtHandle> Create() {
    cublasLtHandle_t h = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&h));
    LtHandle out;
    out.h_ = UniqueLtHandle<cublasLtHandle_t, cublasLtDestroy>(h);
    return out;
  }
  cublasLtHandle_t get() const { return h_.get(); }

 private:
  UniqueLtHandle<cublasLtHandle_t, cublasLtDestroy> h_;
};

// What a matmul computes: compute/scale types, transposes, scale pointers and modes.
class LtMatmulDesc {
 public:
  LtMatmulDesc() = default;
  static absl::StatusOr<LtMatmulDesc> Create(cublasComputeType_t compute, cudaDataType_t scale) {
    cublasLtMatmulDesc_t d = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&d, compute, scale));
    LtMatmulDesc out;
    out.d_ = UniqueLtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>(d);
    return out;
  }
  template <typename V>
  absl::Status Set(cublasLtMatmulDescAttributes_t attr, const V& value) {
    CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(d_.get(), attr, &value, sizeof(V)));
    return absl::OkStatus();
  }
  cublasLtMatmulDesc_t get() const { return d_.get(); }

 private:
  UniqueLtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> d_;
};

// A column-major matrix of `rows` x `cols` with leading dimension `ld`.
class LtMatrixLayout {
 public:
  LtMatrixLayout() = default;
  static absl::StatusOr<LtMatrixLayout> Create(cudaDataType_t type, uint64_t rows, uint64_t cols,
                                               int64_t ld) {
    cublasLtMatrixLayout_t l = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
    LtMatrixLayout out;
    out.l_ = UniqueLtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>(l);
    return out;
  }
  // Sets one layout attribute (e.g. CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT as int32_t,
  // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET as int64_t); the status names the call.
  template <typename V>
  absl::Status Set(cublasLtMatrixLayoutAttribute_t attr, const V& value) {
    CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(l_.get(), attr, &value, sizeof(V)));
    return absl::OkStatus();
  }
  cublasLtMatrixLayout_t get() const { return l_.get(); }

 private:
  UniqueLtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> l_;
};

// Heuristic search preferences (workspace limit).
class LtMatmulPreference {
 public:
  LtMatmulPreference() = default;
  static absl::StatusOr<LtMatmulPreference> Create(size_t max_workspace_bytes) {
    cublasLtMatmulPreference_t p = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&p));
    LtMatmulPreference out;
    out.p_ = UniqueLtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>(p);
    CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &max_workspace_bytes, sizeof(max_workspace_bytes)));
    return out;
  }
  cublasLtMatmulPreference_t get() const { return p_.get(); }

 private:
  UniqueLtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> p_;
};

}  // namespace gemmprof::kernels
