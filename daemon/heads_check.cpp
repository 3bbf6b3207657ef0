#include "daemon/heads_check.hpp"

#include "base/error.hpp"
#include "signing/head_verifier.hpp"
#include "signing/heads_file.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::daemon {

nlohmann::json check_signed_heads(const std::vector<memory::AuditLink>& links,
                                  const std::string& heads_text, const std::string& origin,
                                  const std::optional<std::string>& key) {
  if (!key) {
    return {{"checked", false}, {"entries", signing::split_heads_file(heads_text).entries.size()}};
  }
  std::string why;
  const auto verifier = signing::parse_verifier_key(*key, &why);
  if (!verifier) throw Error(Errc::kInvalidArgument, "--key: " + why);

  std::vector<signing::ChainLink> chain;
  chain.reserve(links.size());
  for (const auto& l : links) {
    chain.push_back(signing::chain_link(l.seq, l.hash, l.type, l.to, l.size));
  }
  const signing::HeadsReport report = signing::verify_heads(chain, heads_text, *verifier, origin);
  if (!report.ok()) {
    const signing::Finding& first = report.findings.front();
    std::string message =
        "signed heads (" + std::string(signing::finding_name(first.kind)) + "): " + first.message;
    if (report.findings.size() > 1) {
      message += " (and " + std::to_string(report.findings.size() - 1) + " more finding(s))";
    }
    throw Error(Errc::kAuditBroken, message);
  }
  return {{"checked", true},
          {"heads", report.heads},
          {"last_size", report.last_size},
          {"key", verifier->name}};
}

}  // namespace leasefs::daemon
