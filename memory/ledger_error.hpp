// Why a decision on a request was refused (I8: approvals are consumed once).
// A refusal, not a storage failure: storage failures are MemoryError.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.hpp"
#include "memory/ledger_types.hpp"

namespace leasefs::memory {

enum class DecisionError {
  not_found,        // no request has that id
  already_decided,  // approved or rejected before; the existing decision stands
  stale,            // the request belongs to another turn than the current one
};

// The wire code a client sees: not_found, already_decided, stale_request.
Errc errc_of(DecisionError error) noexcept;

class LedgerError : public Error {
 public:
  LedgerError(DecisionError error, const std::string& message,
              std::optional<Request> request = std::nullopt)
      : Error(errc_of(error), message), error_(error), request_(std::move(request)) {}

  DecisionError error() const { return error_; }
  // The request as stored (for already_decided: with the existing decision).
  const std::optional<Request>& request() const { return request_; }

 private:
  DecisionError error_;
  std::optional<Request> request_;
};

}  // namespace leasefs::memory
