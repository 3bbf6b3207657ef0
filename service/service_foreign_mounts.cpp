// A foreign mount ends the lease (service/foreign_mount.hpp): the mount watch
// reports the mounts no approver made on or beneath the tree; the first one
// revokes every grant at once, and grant and approve are refused until none is
// left. Each one that appears or goes is an event (watch, the audit).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "base/clock.hpp"
#include "base/error.hpp"
#include "base/inert_text.hpp"
#include "service/service.hpp"

namespace leasefs::service {

namespace {

nlohmann::json mount_event(const ForeignMount& m, const char* state) {
  return {{"type", "foreign_mount"}, {"state", state},     {"mount_point", m.mount_point},
          {"fstype", m.fstype},      {"source", m.source}, {"uid", m.uid},
          {"mount_id", m.mount_id}};
}

bool listed(const std::vector<ForeignMount>& list, const ForeignMount& m) {
  return std::any_of(list.begin(), list.end(),
                     [&](const ForeignMount& o) { return o.mount_id == m.mount_id; });
}

}  // namespace

void Service::set_foreign_mounts(std::vector<ForeignMount> mounts) {
  auto lock = lock_service();
  for (auto& m : mounts) {
    for (const auto& old : foreign_mounts_) {
      if (old.mount_id == m.mount_id) m.seen_ms = old.seen_ms;
    }
    if (m.seen_ms == 0) m.seen_ms = base::now_ms();
  }
  std::vector<ForeignMount> gone;
  for (const auto& old : foreign_mounts_) {
    if (!listed(mounts, old)) gone.push_back(old);
  }
  std::vector<ForeignMount> appeared;
  for (const auto& m : mounts) {
    if (!listed(foreign_mounts_, m)) appeared.push_back(m);
  }
  foreign_mounts_ = std::move(mounts);

  size_t revoked = 0;
  if (!foreign_mounts_.empty() && !state_.grants.empty()) {
    gate::TaskState next = state_;
    revoked = next.grants.size();
    next.grants.clear();
    try {
      commit(std::move(next), Durability::kAfterReply);
    } catch (const std::exception& e) {
      // commit() published a snapshot without the lease before it threw.
      spdlog::error("foreign mount: the revocation was not recorded: {}", e.what());
    }
    if (ledger_) {
      try {
        ledger_->record_revoke({"", state_.task_id, static_cast<int64_t>(state_.turn_index),
                                static_cast<uint32_t>(::geteuid()),
                                "a mount no approver made covers the tree"});
      } catch (const std::exception& e) {
        spdlog::error("ledger: revoke not recorded: {}", e.what());  // the revoke stands
      }
    }
  }
  for (const auto& m : appeared) {
    spdlog::warn("foreign mount at {} ({} by uid {}): {} grant(s) revoked", m.mount_point, m.fstype,
                 m.uid, revoked);
    nlohmann::json ev = mount_event(m, "appeared");
    ev["revoked"] = std::exchange(revoked, 0);
    emit(std::move(ev));
  }
  for (const auto& m : gone) {
    spdlog::info("foreign mount at {} is gone", m.mount_point);
    emit(mount_event(m, "gone"));
  }
}

void Service::require_no_foreign_mount() const {
  if (foreign_mounts_.empty()) return;
  const ForeignMount& m = foreign_mounts_.front();
  // The mount point is the agent's choice: quoted, it never starts a line.
  const std::string where = base::quote_name(m.mount_point);
  throw Error(Errc::kForeignMount,
              "no lease while a mount no approver made covers the tree: " + where + " (" +
                  m.fstype + ", mounted by uid " + std::to_string(m.uid) + ")" +
                  (foreign_mounts_.size() > 1
                       ? " and " + std::to_string(foreign_mounts_.size() - 1) + " more"
                       : std::string()) +
                  "; every grant was revoked when it appeared. Remove it (as root: `umount -l " +
                  where + "`), then grant again");
}

}  // namespace leasefs::service
