#include "report/reporter.hpp"

#include <string>

#include "base/clock.hpp"

namespace leasefs::report {

void Reporter::refusal(gate::Op op, std::string_view path, const gate::Caller& caller,
                       gate::DenyReason reason, int64_t at_ms, uint64_t turn) noexcept {
  try {
    Sink* sink = sink_.load();
    if (!sink) return;
    const int64_t now = base::now_ms();
    std::string process = names_.of(caller, op, path, now);
    sink->on_refusal(Refusal{op, std::string(path), caller, std::move(process), reason, 1,
                             at_ms > 0 ? at_ms : now, at_ms > 0 ? turn : gate_.snapshot()->turn});
  } catch (...) {
    // Reporting must never turn a refusal into a crash of the filesystem thread.
  }
}

void Reporter::write_closed(WriteClosed closed) noexcept {
  if (Sink* sink = sink_.load()) sink->on_write_closed(std::move(closed));
}

void Reporter::allowed(Allowed allowed) noexcept {
  if (Sink* sink = sink_.load()) sink->on_allowed(std::move(allowed));
}

}  // namespace leasefs::report
