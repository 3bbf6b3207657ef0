#include "control/command_args.hpp"

#include "service/service.hpp"

namespace leasefs::gate::control {

Service& service(CommandContext& ctx) {
  if (!ctx.service) throw Error(Errc::kInternal, "no service attached to the control plane");
  return *ctx.service;
}

}  // namespace leasefs::gate::control
