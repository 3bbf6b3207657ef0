#include "control/command_args.hpp"

#include "service/service.hpp"

namespace leasefs::control {

service::Service& service(CommandContext& ctx) {
  if (!ctx.service) throw Error(Errc::kInternal, "no service attached to the control plane");
  return *ctx.service;
}

}  // namespace leasefs::control
