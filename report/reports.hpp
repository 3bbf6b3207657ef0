// What the filesystem reports to the control plane, and where it reports it:
// refusals, mutations the gate allowed, and files closed after a leased write.
// A Sink (the pump, report/pump.hpp) takes them; the filesystem reaches it
// through a Reporter (report/reporter.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "base/unique_fd.hpp"
#include "gate/decision.hpp"
#include "gate/op.hpp"

namespace leasefs::report {

struct Refusal {
  gate::Op op = gate::Op::kWrite;
  std::string path;  // relative to the root
  gate::Caller caller;
  std::string process;  // /proc/<pid>/comm, resolved by the reporter
  gate::DenyReason reason = gate::DenyReason::kNone;
  uint64_t count = 1;  // how many identical refusals this event stands for
  int64_t at_ms = 0;
  uint64_t turn = 0;  // the turn it was refused in
};

// A mutation the gate allowed (every op but the writes through an open file,
// which arrive as WriteClosed when the file is closed).
struct Allowed {
  gate::Op op = gate::Op::kCreate;
  std::string path;    // relative to the root
  std::string target;  // the new name of a rename or link, else empty
  gate::Caller caller;
  std::string grant_id;
  uint64_t count = 1;  // how many identical ones this stands for
};

struct WriteClosed {
  std::string path;  // relative to the root, as opened
  uint64_t bytes_written = 0;
  std::string grant_id;  // the grant the file was opened under
  gate::Caller caller;
  base::UniqueFd content;  // read-only fd on the file underneath, for hashing; may be empty
};

// Implemented by the control plane. Called from filesystem threads: must not block
// for long (queue and return).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void on_refusal(Refusal refusal) noexcept = 0;
  virtual void on_write_closed(WriteClosed closed) noexcept = 0;
  virtual void on_allowed(Allowed allowed) noexcept { (void)allowed; }
};

}  // namespace leasefs::report
