#include "service/service_support.hpp"

#include <cstdio>
#include <string>

#include "base/error.hpp"

namespace leasefs::service {

using nlohmann::json;

json request_json(const memory::Request& r) {
  json j = {{"id", r.id},
            {"task_id", r.task_id},
            {"turn", r.turn},
            {"reason", r.reason},
            {"paths", r.paths},
            {"state", memory::to_string(r.state)},
            {"requester_uid", r.requester_uid}};
  // Who asked, next to what was asked (0 and "" for requests made before schema 5).
  if (r.requester_pid != 0) {
    j["requester_pid"] = r.requester_pid;
    j["requester_command"] = r.requester_command;
  }
  if (r.decided_by) j["decided_by"] = *r.decided_by;
  if (!r.decision_reason.empty()) j["decision_reason"] = r.decision_reason;
  return j;
}

void require_approver(const gate::Actor& actor, const char* what) {
  if (actor.approver) return;
  throw Error(Errc::kForbidden, std::string("uid ") + std::to_string(actor.uid) + " may not " +
                                    what +
                                    ": only an approver (root, the daemon's owner or a "
                                    "configured --approver-uid/--approver-gid) may");
}

void require_task(const gate::TaskState& s) {
  if (!s.has_task()) {
    throw Error(Errc::kNoTask, "no task: start one with `leasectl start \"DESCRIPTION\"`");
  }
}

void require_in_progress(const gate::TaskState& s, const char* what) {
  require_task(s);
  if (s.status != gate::TaskStatus::kInProgress) {
    throw Error(
        Errc::kNotInProgress,
        std::string("cannot ") + what + ": task " + s.task_id + " is " +
            std::string(to_string(s.status)) +
            (gate::is_terminal(s.status) ? "; start a new task" : "; run `leasectl resume` first"));
  }
}

std::string padded(const char* prefix, uint64_t n) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%04llu", prefix, static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace leasefs::service
