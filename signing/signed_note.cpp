#include "signing/signed_note.hpp"

#include <stdexcept>

#include "base/json_text.hpp"
#include "signing/base64.hpp"

namespace leasefs::signing {
namespace {

bool has_control_but_newline(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') return true;
  }
  return false;
}

std::string id_bytes(uint32_t id) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((id >> (24 - 8 * i)) & 0xff);
  return out;
}

}  // namespace

std::string sign_note(std::string_view text, const Ed25519Key& key, std::string_view name) {
  if (text.empty() || text.back() != '\n' || has_control_but_newline(text) ||
      !base::is_utf8(text)) {
    throw std::invalid_argument("a note's text ends in a newline and has no control characters");
  }
  if (!valid_key_name(name)) throw std::invalid_argument("not a key name: " + std::string(name));
  const uint32_t id = ed25519_key_id(name, key.public_key());
  std::string out(text);
  out += '\n';
  out += kSignatureLinePrefix;
  out += name;
  out += ' ';
  out += base64_encode(id_bytes(id) + key.sign(text));
  out += '\n';
  return out;
}

std::optional<Note> parse_note(std::string_view data, std::string* why) {
  if (!base::is_utf8(data) || has_control_but_newline(data)) {
    *why = "the note is not UTF-8 text without control characters";
    return std::nullopt;
  }
  if (data.empty() || data.back() != '\n') {
    *why = "the note does not end in a newline";
    return std::nullopt;
  }
  // The text ends at the last blank line; signatures follow it.
  const size_t blank = data.rfind("\n\n");
  if (blank == std::string_view::npos) {
    *why = "the note has no blank line before its signatures";
    return std::nullopt;
  }
  Note note;
  note.text = std::string(data.substr(0, blank + 1));
  std::string_view rest = data.substr(blank + 2);
  if (rest.empty()) {
    *why = "the note has no signature line";
    return std::nullopt;
  }
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    if (line.substr(0, kSignatureLinePrefix.size()) != kSignatureLinePrefix) {
      *why = "a signature line does not start with an em dash and a space";
      return std::nullopt;
    }
    line.remove_prefix(kSignatureLinePrefix.size());
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      *why = "a signature line is not a key name and a signature";
      return std::nullopt;
    }
    NoteSignature sig;
    sig.name = std::string(line.substr(0, space));
    if (!valid_key_name(sig.name)) {
      *why = "a signature line's key name is not valid";
      return std::nullopt;
    }
    const auto raw = base64_decode(line.substr(space + 1));
    if (!raw || raw->size() < 5) {
      *why = "a signature line's signature is not canonical base64 of a key ID and a signature";
      return std::nullopt;
    }
    for (int i = 0; i < 4; ++i) sig.id = (sig.id << 8) | static_cast<unsigned char>((*raw)[i]);
    sig.signature = raw->substr(4);
    note.signatures.push_back(std::move(sig));
  }
  return note;
}

NoteCheck check_note(const Note& note, const VerifierKey& key) {
  bool verified = false;
  for (const auto& sig : note.signatures) {
    if (sig.name != key.name || sig.id != key.id) continue;
    if (!ed25519_verify(key.public_key, note.text, sig.signature)) return NoteCheck::kBadSignature;
    verified = true;
  }
  return verified ? NoteCheck::kVerified : NoteCheck::kNotSigned;
}

}  // namespace leasefs::signing
