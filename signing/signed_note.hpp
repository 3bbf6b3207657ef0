// C2SP signed notes (c2sp.org/signed-note): a text ending in a newline, a blank
// line, then one or more signature lines
//
//   — <key name> <base64(4-byte big-endian key ID || signature)>
//
// (an em dash, U+2014, and a space). The signature covers the text with its
// final newline, not the blank line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "signing/ed25519_key.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::signing {

inline constexpr std::string_view kSignatureLinePrefix = "\xe2\x80\x94 ";  // "— "

struct NoteSignature {
  std::string name;
  uint32_t id = 0;
  std::string signature;  // the bytes after the key ID
};

struct Note {
  std::string text;  // with its final newline
  std::vector<NoteSignature> signatures;
};

// `text` (ending in a newline, without control characters other than newline)
// signed by `key` under `name`. Throws std::invalid_argument for a text or name
// the spec does not allow.
std::string sign_note(std::string_view text, const Ed25519Key& key, std::string_view name);

// The note `data` holds, or nullopt with the reason in `why`. Strict: valid
// UTF-8, no control character but newline, the text cut at the last blank line,
// every signature line well formed and its base64 canonical.
std::optional<Note> parse_note(std::string_view data, std::string* why);

enum class NoteCheck {
  kVerified,      // a signature by the key verifies, and none by it fails
  kBadSignature,  // a line carries the key's name and ID, and does not verify
  kNotSigned,     // no line carries the key's name and ID
};

// As the spec says: lines of other keys are ignored; one of the key's that fails
// rejects the note.
NoteCheck check_note(const Note& note, const VerifierKey& key);

}  // namespace leasefs::signing
