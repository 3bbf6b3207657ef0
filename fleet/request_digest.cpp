#include "fleet/request_digest.hpp"

#include "base/sha256.hpp"

namespace leasefs::fleet {

nlohmann::json canonical_request(const nlohmann::json& p) {
  return {{"id", p.value("id", std::string())},
          {"task_id", p.value("task_id", std::string())},
          {"turn", p.value("turn", int64_t{0})},
          {"reason", p.value("reason", std::string())},
          {"paths", p.value("paths", nlohmann::json::array())},
          {"requester_uid", p.value("requester_uid", int64_t{0})},
          {"requester_pid", p.value("requester_pid", int64_t{0})},
          {"requester_command", p.value("requester_command", std::string())}};
}

std::string request_digest(const nlohmann::json& pending) {
  return base::sha256_hex(canonical_request(pending).dump());
}

}  // namespace leasefs::fleet
