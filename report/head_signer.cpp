#include "report/head_signer.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.hpp"
#include "base/unique_fd.hpp"
#include "signing/heads_file.hpp"
#include "signing/key_file.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::report {
namespace {

// Appends `entry` with one write(2) and makes it durable; why not, or nullopt.
std::optional<std::string> append_durably(const std::string& path, const std::string& entry) {
  base::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return "cannot open " + path + ": " + std::strerror(errno);
  for (;;) {
    const ssize_t n = ::write(fd.get(), entry.data(), entry.size());
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(entry.size())) {
      return "cannot append to " + path + ": " + (n < 0 ? std::strerror(errno) : "a short write");
    }
    break;
  }
  if (::fdatasync(fd.get()) != 0) return "cannot sync " + path + ": " + std::strerror(errno);
  return std::nullopt;
}

}  // namespace

HeadSigner::HeadSigner(Options options) : options_(std::move(options)) {
  std::lock_guard lock(mu_);
  load_key_locked();
}

bool HeadSigner::load_key_locked() {
  if (key_) return false;
  signing::LoadedKey loaded = signing::load_key_file(options_.key_path);
  std::string why;
  if (loaded.key) {
    verifier_key_ = signing::VerifierKey::of(options_.key_name, loaded.key->public_key()).text();
    key_ = std::move(loaded.key);
    // Said at debug: at start the log is still the terminal `leasefs mount`
    // prints to, and each signed head is said at info.
    spdlog::debug("audit heads are signed at each turn's end with {} (verifier key {})",
                  options_.key_path, verifier_key_);
  } else {
    why = "audit heads unsigned: " + loaded.why + (loaded.missing ? "; run `leasefs keygen`" : "");
  }
  if (why == why_unsigned_) return false;
  // No key yet is how a machine starts (the package makes one): said, at info.
  // A key refused is something to look at.
  if (!why.empty() && loaded.missing) spdlog::info("{}", why);
  if (!why.empty() && !loaded.missing) spdlog::warn("{}", why);
  why_unsigned_ = why;
  return true;
}

nlohmann::json HeadSigner::sign(uint64_t size, const std::string& hash,
                                std::optional<uint64_t> turn) {
  bool changed = false;
  nlohmann::json record = sign_locked(size, hash, turn, &changed);
  if (changed) {
    {
      std::lock_guard lock(tell_mu_);
      note_to_tell_ = unsigned_note();
      tell_pending_ = true;
    }
    teller_.wake();
  }
  return record;
}

nlohmann::json HeadSigner::sign_locked(uint64_t size, const std::string& hash,
                                       std::optional<uint64_t> turn, bool* changed) {
  std::lock_guard lock(mu_);
  *changed = load_key_locked();
  nlohmann::json record{{"size", size}, {"ts_ms", base::now_ms()}};
  if (turn) record["turn"] = *turn;
  auto unsigned_record = [&](const std::string& why) {
    record["type"] = "head_unsigned";
    record["why"] = why;
    return record;
  };
  if (!key_) return unsigned_record(why_unsigned_);
  const auto root_hash = signing::hash_bytes(hash);
  if (!root_hash) return unsigned_record("the chain's head hash is not 64 hex digits");
  try {
    const std::string note = signing::sign_note(
        signing::tree_head_text({options_.origin, size, *root_hash}), *key_, options_.key_name);
    if (auto why = append_durably(options_.heads_path, signing::heads_file_entry(note))) {
      spdlog::error("audit heads: {}", *why);
      return unsigned_record(*why);
    }
  } catch (const std::exception& e) {
    spdlog::error("audit heads: cannot sign the head of size {}: {}", size, e.what());
    return unsigned_record(e.what());
  }
  ++signed_;
  last_size_ = size;
  spdlog::info("audit head signed at a turn's end: size {}, key {}", size, options_.key_path);
  record["type"] = "head_signed";
  return record;
}

nlohmann::json HeadSigner::status() const {
  std::lock_guard lock(mu_);
  nlohmann::json out{{"signed", key_.has_value()},
                     {"key_path", options_.key_path},
                     {"origin", options_.origin},
                     {"heads_signed", signed_}};
  if (key_) out["verifier_key"] = verifier_key_;
  if (last_size_ > 0) out["last_size"] = last_size_;
  if (!why_unsigned_.empty()) out["why_unsigned"] = why_unsigned_;
  return out;
}

std::string HeadSigner::unsigned_note() const {
  std::lock_guard lock(mu_);
  return why_unsigned_;
}

void HeadSigner::set_on_change(std::function<void(const std::string&)> fn) {
  {
    std::lock_guard lock(tell_mu_);
    on_change_ = std::move(fn);
  }
  teller_.start("heads-status", [this] { tell_loop(); });
}

void HeadSigner::tell_loop() {
  std::unique_lock lock(tell_mu_);
  while (teller_.wait(lock, [&] { return tell_pending_; })) {
    tell_pending_ = false;
    const std::string note = note_to_tell_;
    const auto tell = on_change_;
    lock.unlock();
    if (tell) tell(note);
    lock.lock();
  }
}

}  // namespace leasefs::report
