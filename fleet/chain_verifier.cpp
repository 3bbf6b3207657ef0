#include "fleet/chain_verifier.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "base/json_text.hpp"
#include "base/sha256.hpp"
#include "signing/head_verifier.hpp"
#include "signing/heads_file.hpp"
#include "signing/key_name.hpp"
#include "signing/signed_note.hpp"
#include "signing/tree_head.hpp"

namespace leasefs::fleet {

namespace {

using nlohmann::json;

const std::string kZeroHash(64, '0');

// What a record's hash covers, as the daemon's audit log computes it
// (memory/audit_log.cpp): its seq, ts_ms, event and prev, keys sorted.
std::string canonical(uint64_t seq, int64_t ts_ms, const json& event, const std::string& prev) {
  return base::json_text(json{{"seq", seq}, {"ts_ms", ts_ms}, {"event", event}, {"prev", prev}});
}

std::string event_string(const json& event, const char* key) {
  const auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The key that signs `checkpoint`: of `keys`, the one whose name and key ID a
// signature line carries (machines that share a machine ID, as namespaces or
// containers on one host do, share a key name, not a key), else the first one
// of a name on a line (a wrong key ID then fails as a bad signature).
const signing::VerifierKey* key_for(const std::string& checkpoint,
                                    const std::vector<signing::VerifierKey>& keys,
                                    std::string* named) {
  std::string why;
  const auto note = signing::parse_note(checkpoint, &why);
  if (!note) return nullptr;
  for (const auto& sig : note->signatures) {
    if (named->empty()) *named = sig.name;
    for (const auto& k : keys) {
      if (k.name == sig.name && k.id == sig.id) return &k;
    }
  }
  for (const auto& sig : note->signatures) {
    for (const auto& k : keys) {
      if (k.name == sig.name) return &k;
    }
  }
  return nullptr;
}

void verify_records(PgConnection& db, ChainReport& report, std::vector<signing::ChainLink>& chain) {
  PgResult rows = db.exec(
      "SELECT seq, prev, hash, line FROM fleet.audit_records WHERE project_id = $1 ORDER BY seq",
      {report.project_id});
  std::string prev = kZeroHash;
  uint64_t expected = 1;
  for (int i = 0; i < rows.rows(); ++i) {
    const uint64_t seq = static_cast<uint64_t>(rows.integer(i, 0));
    const std::string row_prev = rows.text(i, 1), row_hash = rows.text(i, 2);
    const std::string at = "record " + std::to_string(seq);
    auto fail = [&](std::string kind, std::string message) {
      report.findings.push_back({std::move(kind), at + ": " + message});
    };
    if (seq != expected) {
      report.findings.push_back(
          {"gap", "record " + std::to_string(expected) +
                      (seq == expected + 1 ? " is missing"
                                           : " to " + std::to_string(seq - 1) + " are missing") +
                      " (the ledger holds " + std::to_string(expected - 1) + " and then " +
                      std::to_string(seq) + ")"});
      return;
    }
    if (row_prev != prev) {
      fail("fork", "its prev is not the hash of record " + std::to_string(seq - 1));
      return;
    }
    const json line = json::parse(rows.text(i, 3), nullptr, false);
    if (!line.is_object() || !line.contains("event") || !line["seq"].is_number_unsigned() ||
        !line["ts_ms"].is_number_integer() || !line["prev"].is_string() ||
        !line["hash"].is_string()) {
      fail("malformed", "its shipped line is not a well-formed audit record");
      return;
    }
    if (line["seq"].get<uint64_t>() != seq || line["prev"].get<std::string>() != row_prev ||
        line["hash"].get<std::string>() != row_hash) {
      fail("edited", "its shipped line does not say the seq, prev and hash of its row");
      return;
    }
    const json& event = line["event"];
    if (base::sha256_hex(canonical(seq, line["ts_ms"].get<int64_t>(), event, row_prev)) !=
        row_hash) {
      fail("edited", "its content does not match its hash: a shipped byte was changed");
      return;
    }
    uint64_t size = 0;
    if (event.is_object() && event.contains("size") && event["size"].is_number_unsigned()) {
      size = event["size"].get<uint64_t>();
    }
    chain.push_back(signing::chain_link(seq, row_hash,
                                        event.is_object() ? event_string(event, "type") : "",
                                        event.is_object() ? event_string(event, "to") : "", size));
    prev = row_hash;
    ++expected;
    ++report.records;
  }
  PgResult head =
      db.exec("SELECT seq, hash FROM fleet.audit_heads WHERE project_id = $1", {report.project_id});
  const uint64_t last = expected - 1;
  if (head.rows() == 0
          ? last != 0
          : static_cast<uint64_t>(head.integer(0, 0)) != last || head.text(0, 1) != prev) {
    report.findings.push_back(
        {"head", "the ledger's head of this chain (" +
                     (head.rows() == 0 ? std::string("none") : "record " + head.text(0, 0)) +
                     ") is not its last record (" + std::to_string(last) + ")"});
  }
}

// A chain of which the ledger holds no signed head: whether it needed one. A
// record saying a head was signed is a gap (the head was not shipped, or was
// taken out); a turn that ended with none after it, silence.
void verify_unsigned(ChainReport& report, const std::vector<signing::ChainLink>& chain) {
  for (const auto& l : chain) {
    if (l.kind != signing::ChainLink::Kind::kHeadSigned) continue;
    report.findings.push_back(
        {"gap", "record " + std::to_string(l.seq) + " says the head of size " +
                    std::to_string(l.signed_size) +
                    " was signed, and the ledger holds no signed head of this chain"});
    return;
  }
  for (const auto& l : chain) {
    if (l.kind != signing::ChainLink::Kind::kTurnEnd) continue;
    report.findings.push_back(
        {"silence", "the turn that ended at record " + std::to_string(l.seq) +
                        " has no signed head: the ledger holds none of this chain"});
    return;
  }
}

// "line N: " of a finding in the heads text the rows were laid out in, which
// means nothing to a reader of the ledger: the row's size says it instead.
std::string row_message(const signing::Finding& f, const std::map<size_t, uint64_t>& row_at_line) {
  const auto row = row_at_line.find(f.line);
  const std::string prefix = "line " + std::to_string(f.line) + ": ";
  if (f.line == 0) return f.message;  // the chain's (gap, silence): it names its sizes
  if (row == row_at_line.end() || !f.message.starts_with(prefix)) {
    return (f.size ? "signed head of size " + std::to_string(f.size) + ": " : std::string()) +
           f.message;
  }
  return "the signed head in the row of size " + std::to_string(row->second) + ": " +
         f.message.substr(prefix.size());
}

void verify_signed(PgConnection& db, ChainReport& report,
                   const std::vector<signing::ChainLink>& chain,
                   const std::vector<signing::VerifierKey>& keys) {
  PgResult rows = db.exec(
      "SELECT size, root_hash, checkpoint FROM fleet.signed_heads WHERE project_id = $1"
      " ORDER BY size",
      {report.project_id});
  if (rows.rows() == 0) {
    verify_unsigned(report, chain);
    return;
  }
  // The rows laid out as the daemon's heads file, in order of size.
  std::string heads_text;
  std::map<size_t, uint64_t> row_at_line;  // an entry's first line -> its row's size
  size_t line = 1;
  const signing::VerifierKey* key = nullptr;
  std::string named;
  for (int i = 0; i < rows.rows(); ++i) {
    std::string checkpoint = rows.text(i, 2);
    if (!checkpoint.ends_with('\n')) checkpoint += '\n';
    if (!key) key = key_for(checkpoint, keys, &named);
    row_at_line[line] = static_cast<uint64_t>(rows.integer(i, 0));
    const std::string entry = signing::heads_file_entry(checkpoint);
    line += static_cast<size_t>(std::count(entry.begin(), entry.end(), '\n'));
    heads_text += entry;
  }
  if (!key) {
    report.findings.push_back(
        {"no_key", "no verifier key given for " +
                       (named.empty() ? std::string("its signed heads") : named) +
                       " (--key-file)"});
    return;
  }
  const signing::HeadsReport heads =
      signing::verify_heads(chain, heads_text, *key, signing::log_origin(key->name, report.root));
  report.signed_heads = heads.heads;
  for (const auto& f : heads.findings) {
    report.findings.push_back(
        {std::string(signing::finding_name(f.kind)), row_message(f, row_at_line)});
  }
  // What the row's own columns say, which a reader of the ledger may query
  // instead of the checkpoint: the size and root hash its verified checkpoint signs.
  for (int i = 0; i < rows.rows(); ++i) {
    std::string why;
    const auto note = signing::parse_note(rows.text(i, 2), &why);
    if (!note || signing::check_note(*note, *key) != signing::NoteCheck::kVerified) continue;
    const auto head = signing::parse_tree_head(note->text, &why);
    if (!head) continue;
    const std::string size = rows.text(i, 0), root_hash = rows.text(i, 1);
    const auto column_hash = signing::hash_bytes(root_hash);
    if (size == std::to_string(head->size) && column_hash && *column_hash == head->root_hash) {
      continue;
    }
    const std::string signs = size != std::to_string(head->size)
                                  ? "size " + std::to_string(head->size)
                                  : "another root hash than its root_hash column";
    report.findings.push_back({"mismatch", "the row of size " + size +
                                               " is not what its checkpoint signs (" + signs +
                                               "): a shipped column was changed"});
  }
}

}  // namespace

std::vector<ChainReport> verify_chains(PgConnection& db,
                                       const std::vector<signing::VerifierKey>& keys) {
  std::vector<ChainReport> out;
  PgResult projects =
      db.exec("SELECT id, machine, root FROM fleet.projects ORDER BY machine, root, id");
  for (int i = 0; i < projects.rows(); ++i) {
    ChainReport report;
    report.project_id = projects.text(i, 0);
    report.machine = projects.text(i, 1);
    report.root = projects.text(i, 2);
    std::vector<signing::ChainLink> chain;
    verify_records(db, report, chain);
    // Signed heads are checked against a chain that holds together only.
    if (report.findings.empty()) verify_signed(db, report, chain, keys);
    out.push_back(std::move(report));
  }
  return out;
}

std::vector<signing::VerifierKey> parse_verifier_keys(const std::string& text,
                                                      const std::string& source) {
  std::vector<signing::VerifierKey> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string why;
    auto key = signing::parse_verifier_key(line, &why);
    if (!key) {
      throw std::runtime_error(source + ":" + std::to_string(n) + ": not a verifier key: " + why);
    }
    out.push_back(std::move(*key));
  }
  return out;
}

}  // namespace leasefs::fleet
