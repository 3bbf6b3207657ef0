#include "fuse/temp_siblings.hpp"

namespace leasefs::fuse {

bool TempSiblings::add(TempSibling sibling) {
  std::lock_guard lock(mu_);
  if (by_key_.size() >= kMaxTempSiblings) return false;
  const uint64_t k = key(sibling.dev, sibling.ino);
  auto range = by_key_.equal_range(k);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.dev == sibling.dev && it->second.ino == sibling.ino) {
      it->second = std::move(sibling);
      return true;
    }
  }
  by_key_.emplace(k, std::move(sibling));
  count_.store(by_key_.size(), std::memory_order_release);
  return true;
}

std::optional<TempSibling> TempSiblings::find(dev_t dev, ino_t ino) const {
  if (empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto range = by_key_.equal_range(key(dev, ino));
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.dev == dev && it->second.ino == ino) return it->second;
  }
  return std::nullopt;
}

void TempSiblings::erase(dev_t dev, ino_t ino) {
  if (empty()) return;
  std::lock_guard lock(mu_);
  auto range = by_key_.equal_range(key(dev, ino));
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.dev == dev && it->second.ino == ino) {
      by_key_.erase(it);
      break;
    }
  }
  count_.store(by_key_.size(), std::memory_order_release);
}

std::vector<TempSibling> TempSiblings::close_except(std::optional<uint64_t> open_turn) {
  std::vector<TempSibling> closed;
  if (empty()) return closed;
  std::lock_guard lock(mu_);
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    if (!open_turn || it->second.turn != *open_turn) {
      closed.push_back(std::move(it->second));
      it = by_key_.erase(it);
    } else {
      ++it;
    }
  }
  count_.store(by_key_.size(), std::memory_order_release);
  return closed;
}

}  // namespace leasefs::fuse
