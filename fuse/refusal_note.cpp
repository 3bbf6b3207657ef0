#include "fuse/refusal_note.hpp"

#include <utility>

namespace leasefs::fuse {

namespace {
thread_local RefusalNote* current = nullptr;
}

RefusalNote::RefusalNote() noexcept : previous_(current) {
  current = this;
}

RefusalNote::~RefusalNote() {
  report();
  current = previous_;
}

void RefusalNote::report() noexcept {
  if (!refusal_ || !refusal_->report) return;
  std::function<void()> report = std::exchange(refusal_->report, nullptr);
  report();
}

bool RefusalNote::active() noexcept {
  return current != nullptr;
}

void RefusalNote::record(NotedRefusal refusal) {
  if (!current) return;
  current->report();
  current->refusal_ = std::move(refusal);
}

}  // namespace leasefs::fuse
