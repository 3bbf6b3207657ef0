// `audit.heads`: the signed heads of this root (.longrun/signed_heads), each as
// its exact checkpoint text with the size and root hash it says, for a fleet
// bridge to ship. The bridge runs as its own uid and never reads .longrun: the
// daemon hands the entries over, and the central verifier checks them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace leasefs::daemon {

// The entries of `heads_text` whose size is greater than `after_size`, in the
// file's order, at most `max` of them and at most `max_bytes` of checkpoint text:
//   {"heads": [{"size", "root_hash" (hex), "checkpoint"}], "more": bool,
//    "entries": N (in the file), "damaged": "line L: why" (only when it is)}
// The listing stops at the first entry that is not a checkpoint (the local
// `audit verify --key` names it); nothing after it is handed out.
nlohmann::json list_signed_heads(std::string_view heads_text, uint64_t after_size, size_t max,
                                 size_t max_bytes);

}  // namespace leasefs::daemon
