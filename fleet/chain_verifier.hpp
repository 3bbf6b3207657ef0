// The central verifier behind `leasectl fleet verify`: walks each (machine,
// project) chain of audit records and signed heads the ledger holds, as shipped,
// and says what is wrong with each, first thing first.
//
// Per chain, in order:
//   - the records: seq 1, 2, ... with none missing (gap), each one's prev the
//     hash of the one before (fork), each line's own seq, prev and hash the
//     row's, and its hash the SHA-256 of its canonical content (edited: a byte
//     of a shipped record changed);
//   - the ledger's kept head (fleet.audit_heads) is the last record (head);
//   - the signed heads, through signing::verify_heads with the machine's
//     verifier key and the project's origin (bad signatures, heads that do not
//     match the chain, forks, gaps, silence), each finding named by its row's
//     size; a chain with no signed head at all is a gap when a record says one
//     was signed, silence when a turn ended;
//   - each verified head's row: its size and root_hash columns are what its
//     checkpoint signs (mismatch).
// The verifier keys are given, not read from the ledger: a key a machine's role
// could write would prove nothing. Each is matched to a chain by the key name in
// its signed heads ("leasefs/<machine id>").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/pg_connection.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::fleet {

struct ChainFinding {
  std::string kind;  // gap, fork, edited, malformed, head, no_key, or a signing finding's name
  std::string message;
};

struct ChainReport {
  std::string project_id, machine, root;
  std::size_t records = 0;
  std::size_t signed_heads = 0;        // the heads whose signature verified
  std::vector<ChainFinding> findings;  // the first is the first bad thing
};

std::vector<ChainReport> verify_chains(PgConnection& db,
                                       const std::vector<signing::VerifierKey>& keys);

// The verifier keys in `text`: one per non-empty line (a daemon's `<key>.pub`
// holds one). Throws std::runtime_error naming the line that is not one.
std::vector<signing::VerifierKey> parse_verifier_keys(const std::string& text,
                                                      const std::string& source);

}  // namespace leasefs::fleet
