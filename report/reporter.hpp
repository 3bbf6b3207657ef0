// The filesystem's end of the reports: it passes every refusal, allowed
// mutation and closed file on to the sink attached (the pump), or drops it when
// none is. A refusal gets its process name here, on the filesystem thread, and
// its time and turn when the caller gives none.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "gate/gate.hpp"
#include "report/process_names.hpp"
#include "report/reports.hpp"

namespace leasefs::report {

class Reporter {
 public:
  // `gate` tells the turn of a refusal reported now.
  explicit Reporter(const gate::Gate& gate) noexcept : gate_(gate) {}
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void set_sink(Sink* sink) noexcept { sink_.store(sink); }  // nullptr detaches

  // Every refusal is passed on (the sink coalesces and counts). `at_ms` and
  // `turn`: when it was refused, for one reported later (0: now).
  void refusal(gate::Op op, std::string_view path, const gate::Caller& caller,
               gate::DenyReason reason, int64_t at_ms = 0, uint64_t turn = 0) noexcept;
  void write_closed(WriteClosed closed) noexcept;
  // Every mutation allowed, after the verdict and before it runs (the audit
  // keeps them all; the sink may make the caller wait, it never drops one).
  void allowed(Allowed allowed) noexcept;

 private:
  const gate::Gate& gate_;
  std::atomic<Sink*> sink_{nullptr};
  ProcessNames names_;
};

}  // namespace leasefs::report
