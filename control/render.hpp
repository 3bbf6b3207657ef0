// The wire's view of what the use cases answer: each result struct
// (service/results.hpp) as the JSON object a reply carries. Every reply's shape
// is decided here and nowhere else; the service returns plain values.
#pragma once

#include <nlohmann/json.hpp>

#include "service/results.hpp"

namespace leasefs::gate::control {

// The pieces replies share.
nlohmann::json grant_json(const Grant& grant);
nlohmann::json request_json(const memory::Request& request);
nlohmann::json task_json(const TaskState& state);  // null when there is no task
nlohmann::json hits_json(const std::vector<memory::SearchHit>& hits);
nlohmann::json ask_json(const AskStatus& ask);

nlohmann::json render(const StatusReport& report);
nlohmann::json render(const StartResult& result);
nlohmann::json render(const TurnResult& result);
nlohmann::json render(const GrantResult& result);
nlohmann::json render(const RevokeResult& result);
nlohmann::json render(const RequestResult& result);
nlohmann::json render(const ApproveResult& result);
nlohmann::json render(const RejectResult& result);
nlohmann::json render(const CheckpointResult& result);
nlohmann::json render(const ResumeResult& result);
nlohmann::json render(const TransitionResult& result);
nlohmann::json render(const MemorySearchResult& result);
nlohmann::json render(const MemorySaveResult& result);
nlohmann::json render(const SetAskResult& result);
nlohmann::json render(const JournalStatus& status);
nlohmann::json render(DiffResult result);
nlohmann::json render(UndoResult result);

}  // namespace leasefs::gate::control
