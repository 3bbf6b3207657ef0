#include "fuse/refusal_note.hpp"

namespace leasefs::fuse {

namespace {
thread_local RefusalNote* current = nullptr;
}

RefusalNote::RefusalNote() noexcept : previous_(current) {
  current = this;
}

RefusalNote::~RefusalNote() {
  current = previous_;
}

bool RefusalNote::active() noexcept {
  return current != nullptr;
}

void RefusalNote::record(NotedRefusal refusal) {
  if (current) current->refusal_ = std::move(refusal);
}

}  // namespace leasefs::fuse
