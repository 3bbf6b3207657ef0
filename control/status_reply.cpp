#include "control/status_reply.hpp"

#include "base/json_text.hpp"
#include "control/render.hpp"

namespace leasefs::control {

std::shared_ptr<const std::string> StatusReplies::text(StatusView view) {
  {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (lock.owns_lock() && last_ && *last_ == view) return text_;
  }
  auto text = std::make_shared<const std::string>(base::json_text(render(view)));
  std::unique_lock lock(mu_, std::try_to_lock);
  if (lock.owns_lock()) {
    last_ = std::move(view);
    text_ = text;
  }
  return text;
}

}  // namespace leasefs::control
