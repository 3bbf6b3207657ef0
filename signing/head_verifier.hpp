// Checks signed heads against the audit chain they sign: the verifier behind
// `leasectl audit verify --key`, and one a central verifier can run on shipped
// copies. It takes the chain as plain links (what each record is, as far as
// heads go), the heads file's text and the verifier key, and says what it found.
//
// It assumes the chain itself was verified (hash links, no gap): it checks what
// the heads say about it.
//   - every entry is a well-formed signed note with a valid signature by the key
//     (a line by the key that fails, or none by it: bad_signature);
//   - every head is a checkpoint of this log (its origin) for a size the chain
//     has, with the chain's hash at that size (mismatch);
//   - sizes never go back (went_back), and two heads of one size agree (fork);
//   - every head the chain records as signed is in the file (gap);
//   - no turn ended after the last signed head (silence).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "signing/verifier_key.hpp"

namespace leasefs::signing {

struct ChainLink {
  enum class Kind {
    kRecord,        // anything else
    kTurnEnd,       // a record that ends a turn (`turn`, `end-turn`...): a head must follow
    kHeadSigned,    // "head_signed": the daemon signed the head of `signed_size`
    kHeadUnsigned,  // "head_unsigned": a turn ended and no head could be signed
  };
  uint64_t seq = 0;
  std::string hash;  // 64 hex digits
  Kind kind = Kind::kRecord;
  uint64_t signed_size = 0;  // kHeadSigned
};

// Whether an audit event of `type` (with `to`, a transition's new status) ends a
// turn, so that a signed head must follow it: `turn` and `resume` begin the next
// turn, `end-turn` ends one in place, and a task that becomes completed or
// failed has no turn after it. The daemon signs by this, and verifiers check by it.
bool ends_a_turn(std::string_view type, std::string_view to) noexcept;

// The link for an audit record (seq, hash) whose event has `type`, `to` and
// `size` (0 when it has none): what a verifier of shipped copies builds for
// each record it holds.
ChainLink chain_link(uint64_t seq, std::string hash, std::string_view type, std::string_view to,
                     uint64_t size);

enum class FindingKind { kMalformed, kBadSignature, kMismatch, kWentBack, kFork, kGap, kSilence };

std::string_view finding_name(FindingKind kind) noexcept;

struct Finding {
  FindingKind kind;
  size_t line = 0;    // the heads file's line (1-based); 0 when it is the chain's
  uint64_t size = 0;  // the size concerned, when there is one
  std::string message;
};

struct HeadsReport {
  size_t heads = 0;               // entries whose signature verified
  uint64_t last_size = 0;         // the greatest size signed
  std::vector<Finding> findings;  // in the order found: the first is the first bad thing
  bool ok() const noexcept { return findings.empty(); }
};

// `origin`: the log's origin; nullopt takes the first head's, and every other
// must have the same.
HeadsReport verify_heads(const std::vector<ChainLink>& chain, std::string_view heads_text,
                         const VerifierKey& key, const std::optional<std::string>& origin);

}  // namespace leasefs::signing
