// The signing key's file: the private key as PEM (PKCS#8), the daemon user's
// (root's) alone, and beside it `<path>.pub` with the verifier key for anyone.
//
// A key is used only when nobody but its owner could have written or read it:
// the file is a regular file (not a symlink), owned by the daemon's user, mode
// 0600 or tighter, and every directory above it is that user's or root's and
// writable by nobody else (a sticky directory such as /tmp excepted, where no
// one else can replace an entry). So the agent's uid can neither plant a key of
// its own nor learn this one.
#pragma once

#include <optional>
#include <string>

#include "signing/ed25519_key.hpp"

namespace leasefs::signing {

inline constexpr const char* kDefaultKeyPath = "/etc/leasefs/audit-signing.key";

struct LoadedKey {
  std::optional<Ed25519Key> key;
  bool missing = false;  // no file at the path
  std::string why;       // when there is no key: why, in a sentence
};

LoadedKey load_key_file(const std::string& path);

// Writes `key` to `path` (0600), never replacing a file there, and its verifier
// key (named `name`) to `path`.pub (0644); creates a missing parent directory
// (0755). Returns why not, or nullopt.
std::optional<std::string> create_key_file(const std::string& path, const Ed25519Key& key,
                                           const std::string& name);

}  // namespace leasefs::signing
