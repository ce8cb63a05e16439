// Caps the WatchJob streams one client holds open (gemmprofd --max-watches-per-client):
// a client is a token name, or a peer address when the daemon runs without tokens.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"

namespace gemmprof::security {

// Ceiling of --max-watches-per-client.
inline constexpr int kMaxWatchesPerClientCeiling = 100000;

// Thread-safe.
class WatchLimiter {
 public:
  // One open watch; released when destroyed. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept;
    Lease& operator=(Lease&& o) noexcept;
    ~Lease();

   private:
    friend class WatchLimiter;
    struct State;
    Lease(std::shared_ptr<State> state, std::string client);
    void Release();
    std::shared_ptr<State> state_;
    std::string client_;
  };

  explicit WatchLimiter(int max_per_client);

  // A lease for `client` (see ClientKey). ResourceExhausted naming `label`, the limit
  // and the flag when the client already holds max_per_client leases.
  absl::StatusOr<Lease> Acquire(const std::string& client, const std::string& label);
  // Leases `client` holds now.
  int Active(const std::string& client) const;

 private:
  std::shared_ptr<Lease::State> state_;
};

// The key and the human label of a caller: its token name when it has one, otherwise
// the host of its gRPC peer ("ipv4:10.0.0.5:41234" -> "ipv4:10.0.0.5"), so several
// connections from one machine count together.
std::string WatchClientKey(const std::string& token_name, const std::string& peer);
std::string WatchClientLabel(const std::string& token_name, const std::string& peer);

}  // namespace gemmprof::security
