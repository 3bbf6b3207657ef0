#include "memory/record_id.hpp"

namespace leasefs::memory {

std::string make_record_id(std::string_view prefix, std::int64_t seq) {
  std::string digits = std::to_string(seq);
  std::string id(prefix);
  id += '_';
  if (digits.size() < 4) id.append(4 - digits.size(), '0');
  id += digits;
  return id;
}

}  // namespace leasefs::memory
