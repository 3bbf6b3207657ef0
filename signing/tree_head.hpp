// The note text of a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint) for the
// audit chain's head:
//
//   <origin>
//   <tree size: decimal, no leading zero>
//   <root hash: base64>
//
// The audit chain is a linear hash chain, not a Merkle tree: its "tree size" is
// the number of records (the last record's seq) and its "root hash" is that
// record's hash (SHA-256, 32 bytes), which commits to every record before it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace leasefs::signing {

struct TreeHead {
  std::string origin;
  uint64_t size = 0;
  std::string root_hash;  // 32 bytes
};

std::string tree_head_text(const TreeHead& head);

// The head a checkpoint's note text holds, or nullopt with the reason. Extension
// lines are allowed by the spec and ignored (leasefs writes none).
std::optional<TreeHead> parse_tree_head(std::string_view text, std::string* why);

// The 32 bytes a 64-digit lower-case hex hash spells, or nullopt.
std::optional<std::string> hash_bytes(std::string_view hex);

}  // namespace leasefs::signing
