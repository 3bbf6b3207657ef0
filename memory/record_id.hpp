// Readable ids for stored rows: a prefix and a sequence number zero-padded to
// four digits (S_0001, R_0042), growing past 9999 naturally (S_10000).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace leasefs::memory {

std::string make_record_id(std::string_view prefix, std::int64_t seq);

}  // namespace leasefs::memory
