// policy.apply: the central policy a fleet bridge sends (gate/central_policy.hpp).
// The service checks every field; here a rule given as JSON text (leasectl's
// --rule) becomes the object it holds.
#include "control/command_args.hpp"
#include "control/render.hpp"
#include "service/service.hpp"

namespace leasefs::control {

Result handle_policy_apply(CommandContext& ctx, const json& args, const gate::Actor& actor) {
  json policy = args;
  if (policy.is_object() && policy.contains("rules") && policy["rules"].is_array()) {
    for (json& rule : policy["rules"]) {
      if (!rule.is_string()) continue;
      json parsed = json::parse(rule.get_ref<const std::string&>(), nullptr, false);
      if (parsed.is_discarded()) {
        throw Error(Errc::kInvalidArgument, "policy.apply: a --rule is not JSON: " +
                                                json(rule.get<std::string>().substr(0, 64)).dump());
      }
      rule = std::move(parsed);
    }
  }
  return service(ctx).apply_policy(policy, actor);
}

}  // namespace leasefs::control
