// Signs the audit chain's head when a turn ends, and keeps the signed heads.
//
// The audit writer calls sign() after it has appended a batch holding a "turn"
// or "end-turn" record, with the chain's head as it is then (the batch's last
// record). The head is written as a C2SP checkpoint (signing/tree_head.hpp) in
// a signed note (signing/signed_note.hpp), appended to .longrun/signed_heads
// with one write and made durable; what sign() returns goes into the chain
// after it: "head_signed" with the size, or "head_unsigned" with why none was.
//
// The key (signing/key_file.hpp) is read when the signer is made and, while
// there is none, again at each turn's end, so that `leasefs keygen` takes
// effect without a restart. A missing or refused key never stops the daemon:
// the heads go unsigned, the log and status say why.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/worker_thread.hpp"
#include "signing/ed25519_key.hpp"

namespace leasefs::report {

class HeadSigner {
 public:
  struct Options {
    std::string key_path;    // the private key
    std::string heads_path;  // .longrun/signed_heads
    std::string key_name;    // signing/key_name.hpp
    std::string origin;      // this root's log
  };

  explicit HeadSigner(Options options);

  // Signs the head of `size` records whose last hash is `hash` (hex), at the end
  // of turn `turn` (when the event that ended it says); returns the record for
  // the chain. Never throws.
  nlohmann::json sign(uint64_t size, const std::string& hash, std::optional<uint64_t> turn);

  // For status: whether heads are signed, with which key, how many, and why not.
  nlohmann::json status() const;
  // One line for status.md when heads go unsigned; empty while they are signed.
  std::string unsigned_note() const;
  // Told the new unsigned_note() when it changes (the key came), on a thread of
  // the signer's own: the audit writer never waits for whoever is told (the
  // service, whose lock a publisher may hold while it waits for the writer to
  // drain the audit's queue). Set before the first turn ends.
  void set_on_change(std::function<void(const std::string&)> fn);
  // Stops telling (and joins that thread); before whoever is told goes away.
  void stop_telling() { teller_.stop(); }

  const std::string& origin() const noexcept { return options_.origin; }
  const std::string& heads_path() const noexcept { return options_.heads_path; }

 private:
  // With mu_ held: reads the key if there is none yet; whether why_unsigned_
  // changed.
  bool load_key_locked();
  nlohmann::json sign_locked(uint64_t size, const std::string& hash, std::optional<uint64_t> turn,
                             bool* changed);
  void tell_loop();

  Options options_;
  mutable std::mutex mu_;  // guards everything below
  std::optional<signing::Ed25519Key> key_;
  std::string verifier_key_;
  std::string why_unsigned_;
  uint64_t signed_ = 0;  // heads signed by this run
  uint64_t last_size_ = 0;

  std::mutex tell_mu_;  // guards the three below
  std::function<void(const std::string&)> on_change_;
  std::string note_to_tell_;
  bool tell_pending_ = false;
  base::WorkerThread teller_{tell_mu_};  // last: stopped first
};

}  // namespace leasefs::report
