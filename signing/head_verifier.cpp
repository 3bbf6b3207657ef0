#include "signing/head_verifier.hpp"

#include <algorithm>
#include <map>

#include "signing/heads_file.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"

namespace leasefs::signing {

bool ends_a_turn(std::string_view type, std::string_view to) noexcept {
  if (type == "turn" || type == "end-turn" || type == "resume") return true;
  return type == "transition" && (to == "completed" || to == "failed");
}

ChainLink chain_link(uint64_t seq, std::string hash, std::string_view type, std::string_view to,
                     uint64_t size) {
  ChainLink link;
  link.seq = seq;
  link.hash = std::move(hash);
  if (ends_a_turn(type, to)) {
    link.kind = ChainLink::Kind::kTurnEnd;
  } else if (type == "head_signed") {
    link.kind = ChainLink::Kind::kHeadSigned;
    link.signed_size = size;
  } else if (type == "head_unsigned") {
    link.kind = ChainLink::Kind::kHeadUnsigned;
  }
  return link;
}

std::string_view finding_name(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::kMalformed:
      return "malformed";
    case FindingKind::kBadSignature:
      return "bad_signature";
    case FindingKind::kMismatch:
      return "mismatch";
    case FindingKind::kWentBack:
      return "went_back";
    case FindingKind::kFork:
      return "fork";
    case FindingKind::kGap:
      return "gap";
    case FindingKind::kSilence:
      return "silence";
  }
  return "?";
}

HeadsReport verify_heads(const std::vector<ChainLink>& chain, std::string_view heads_text,
                         const VerifierKey& key, const std::optional<std::string>& origin) {
  HeadsReport report;
  auto found = [&](FindingKind kind, size_t line, uint64_t size, std::string message) {
    report.findings.push_back({kind, line, size, std::move(message)});
  };
  auto at = [](size_t line) { return "line " + std::to_string(line) + ": "; };

  const HeadsFile file = split_heads_file(heads_text);
  std::optional<std::string> log = origin;
  std::map<uint64_t, std::string> signed_hash;  // size -> root hash, of verified heads
  uint64_t previous = 0;
  for (const HeadsEntry& entry : file.entries) {
    std::string why;
    const auto note = parse_note(entry.note, &why);
    if (!note) {
      found(FindingKind::kMalformed, entry.line, 0, at(entry.line) + why);
      continue;
    }
    const NoteCheck check = check_note(*note, key);
    if (check != NoteCheck::kVerified) {
      found(FindingKind::kBadSignature, entry.line, 0,
            at(entry.line) + (check == NoteCheck::kBadSignature
                                  ? "the signature by " + key.name + " does not verify"
                                  : "no signature by the key " + key.name + " (key ID " +
                                        key.text().substr(key.name.size() + 1, 8) + ")"));
      continue;
    }
    const auto head = parse_tree_head(note->text, &why);
    if (!head) {
      found(FindingKind::kMalformed, entry.line, 0, at(entry.line) + why);
      continue;
    }
    ++report.heads;
    const std::string size_text = "size " + std::to_string(head->size);
    if (!log) log = head->origin;
    if (head->origin != *log) {
      found(FindingKind::kMismatch, entry.line, head->size,
            at(entry.line) + "the head of " + size_text + " is for the log " + head->origin +
                ", not " + *log);
      continue;
    }
    if (head->size < previous) {
      found(FindingKind::kWentBack, entry.line, head->size,
            at(entry.line) + size_text + " comes after size " + std::to_string(previous) +
                ": signed sizes never go back");
      continue;
    }
    if (auto same = signed_hash.find(head->size);
        same != signed_hash.end() && same->second != head->root_hash) {
      found(FindingKind::kFork, entry.line, head->size,
            at(entry.line) + "two signed heads of " + size_text + " disagree: the log forked");
      continue;
    }
    if (head->size == 0 || head->size > chain.size()) {
      found(FindingKind::kMismatch, entry.line, head->size,
            at(entry.line) + "a head of " + size_text + " is signed but the chain has " +
                std::to_string(chain.size()) + " records");
      continue;
    }
    const ChainLink& link = chain[head->size - 1];
    const auto chain_hash = hash_bytes(link.hash);
    if (link.seq != head->size || !chain_hash || *chain_hash != head->root_hash) {
      found(FindingKind::kMismatch, entry.line, head->size,
            at(entry.line) + "the signed hash at " + size_text +
                " is not the chain's record there: the chain was changed after it was signed");
      continue;
    }
    signed_hash[head->size] = head->root_hash;
    previous = head->size;
    report.last_size = std::max(report.last_size, head->size);
  }
  if (file.bad_line != 0) {
    found(FindingKind::kMalformed, file.bad_line, 0, at(file.bad_line) + file.why);
  }
  // What the chain says was signed, and when a turn ended with no head after it.
  for (const ChainLink& link : chain) {
    if (link.kind == ChainLink::Kind::kHeadSigned && signed_hash.count(link.signed_size) == 0) {
      found(FindingKind::kGap, 0, link.signed_size,
            "record " + std::to_string(link.seq) + " says the head of size " +
                std::to_string(link.signed_size) +
                " was signed, and no valid signed head of that size is in the file");
    }
  }
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i].kind != ChainLink::Kind::kTurnEnd || chain[i].seq <= report.last_size) continue;
    const bool unsigned_said =
        std::any_of(chain.begin() + static_cast<std::ptrdiff_t>(i), chain.end(),
                    [](const ChainLink& l) { return l.kind == ChainLink::Kind::kHeadUnsigned; });
    found(FindingKind::kSilence, 0, chain[i].seq,
          "the turn that ended at record " + std::to_string(chain[i].seq) +
              " has no signed head (the last signed size is " + std::to_string(report.last_size) +
              ")" +
              (unsigned_said ? "; the chain records that the daemon had no key to sign with" : ""));
    break;
  }
  return report;
}

}  // namespace leasefs::signing
