// The queue's timestamps: Unix time in milliseconds (job created/started/finished, item
// and batch stamps). One definition for job_queue.cc, cluster_work.cc and batch_attempt.cc.
#pragma once

#include <chrono>
#include <cstdint>

namespace gemmprof::queue {

inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace gemmprof::queue
