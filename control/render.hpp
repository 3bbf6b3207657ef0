// The wire's view of what the use cases answer: each result struct
// (service/results.hpp) as the JSON object a reply carries. Every reply's shape
// is decided here and nowhere else; the service returns plain values.
#pragma once

#include <nlohmann/json.hpp>

#include "control/status_reply.hpp"
#include "memory/audit_log.hpp"
#include "service/results.hpp"

namespace leasefs::control {

// The pieces replies share.
nlohmann::json grant_json(const gate::Grant& grant);
nlohmann::json task_json(const gate::TaskState& state);  // null when there is no task
nlohmann::json hits_json(const std::vector<memory::SearchHit>& hits);
nlohmann::json ask_json(const service::AskStatus& ask);

nlohmann::json render(const service::StatusReport& report);
nlohmann::json render(const service::FleetLink& link);
nlohmann::json render(const StatusView& view);  // the report, the budgets, the journal
nlohmann::json render(const service::StartResult& result);
nlohmann::json render(const service::TurnResult& result);
nlohmann::json render(const service::GrantResult& result);
nlohmann::json render(const service::RevokeResult& result);
nlohmann::json render(const service::RequestResult& result);
nlohmann::json render(const service::ApproveResult& result);
nlohmann::json render(const service::RejectResult& result);
nlohmann::json render(const service::CheckpointResult& result);
nlohmann::json render(const service::ResumeResult& result);
nlohmann::json render(const service::TransitionResult& result);
nlohmann::json render(const service::MemorySearchResult& result);
nlohmann::json render(const service::MemorySaveResult& result);
nlohmann::json render(const service::SetAskResult& result);
nlohmann::json render(const service::JournalStatus& status);
nlohmann::json render(const memory::VerifyResult& result);  // audit.verify

}  // namespace leasefs::control
