// Why a decision on a request was refused (I8: approvals are consumed once).
// A refusal, not a storage failure: storage failures are MemoryError.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "memory/ledger_types.hpp"

namespace leasefs::memory {

enum class DecisionError {
  not_found,        // no request has that id
  already_decided,  // approved or rejected before; the existing decision stands
  stale,            // the request belongs to another turn than the current one
};

// The stable code a client sees: "not_found", "already_decided", "stale_request".
std::string_view error_code(DecisionError error);

class LedgerError : public std::runtime_error {
 public:
  LedgerError(DecisionError error, const std::string& message,
              std::optional<Request> request = std::nullopt)
      : std::runtime_error(message), error_(error), request_(std::move(request)) {}

  DecisionError error() const { return error_; }
  std::string_view code() const { return error_code(error_); }
  // The request as stored (for already_decided: with the existing decision).
  const std::optional<Request>& request() const { return request_; }

 private:
  DecisionError error_;
  std::optional<Request> request_;
};

}  // namespace leasefs::memory
