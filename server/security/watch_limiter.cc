#include "server/security/watch_limiter.h"

#include <utility>

namespace gemmprof::security {

struct WatchLimiter::Lease::State {
  int max_per_client = 0;
  std::mutex mu;
  std::map<std::string, int> active;
};

WatchLimiter::Lease::Lease(std::shared_ptr<State> state, std::string client)
    : state_(std::move(state)), client_(std::move(client)) {}

WatchLimiter::Lease::Lease(Lease&& o) noexcept
    : state_(std::move(o.state_)), client_(std::move(o.client_)) {}

WatchLimiter::Lease& WatchLimiter::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    Release();
    state_ = std::move(o.state_);
    client_ = std::move(o.client_);
  }
  return *this;
}

WatchLimiter::Lease::~Lease() { Release(); }

void WatchLimiter::Lease::Release() {
  if (!state_) return;
  std::lock_guard lock(state_->mu);
  auto it = state_->active.find(client_);
  if (it != state_->active.end() && --it->second == 0) state_->active.erase(it);
  state_.reset();
}

WatchLimiter::WatchLimiter(int max_per_client) : state_(std::make_shared<Lease::State>()) {
  state_->max_per_client = max_per_client;
}

absl::StatusOr<WatchLimiter::Lease> WatchLimiter::Acquire(const std::string& client,
                                                          const std::string& label) {
  std::lock_guard lock(state_->mu);
  int& n = state_->active[client];
  if (n >= state_->max_per_client) {
    if (n == 0) state_->active.erase(client);
    return absl::ResourceExhaustedError(
        label + " already has " + std::to_string(n) + " open WatchJob streams, the limit " +
        "(gemmprofd --max-watches-per-client " + std::to_string(state_->max_per_client) +
        "); close one first");
  }
  ++n;
  return Lease(state_, client);
}

int WatchLimiter::Active(const std::string& client) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->active.find(client);
  return it == state_->active.end() ? 0 : it->second;
}

namespace {

std::string PeerHost(const std::string& peer) {
  if (peer.starts_with("ipv4:") || peer.starts_with("ipv6:")) {
    const size_t colon = peer.rfind(':');
    if (colon > 4) return peer.substr(0, colon);
  }
  return peer;
}

}  // namespace

std::string WatchClientKey(const std::string& token_name, const std::string& peer) {
  return token_name.empty() ? "peer " + PeerHost(peer) : "token " + token_name;
}

std::string WatchClientLabel(const std::string& token_name, const std::string& peer) {
  return token_name.empty() ? "client " + PeerHost(peer) : "token '" + token_name + "'";
}

}  // namespace gemmprof::security
