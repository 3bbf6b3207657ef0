#include "gate/grant_glob.hpp"

#include <vector>

namespace leasefs::gate {

namespace {

constexpr std::string_view kSupported =
    " (supported: * within one name, ? for one character, ** for any depth, and a trailing / "
    "for a directory and everything in it)";

GrantGlob refuse(std::string why) {
  return {{}, std::move(why)};
}

// Why one component cannot be matched as the person meant it; empty if it can.
std::string component_problem(std::string_view c) {
  if (c.find("***") != std::string_view::npos) {
    return "'***' is not a glob; use ** for any depth or * within one name" +
           std::string(kSupported);
  }
  if (c.find_first_of("{}") != std::string_view::npos) {
    return "braces are not supported; grant each path with its own --path" +
           std::string(kSupported);
  }
  if (c.find_first_of("[]") != std::string_view::npos) {
    return "brackets (character classes) are not supported; use ? for one character or grant "
           "each path with its own --path" +
           std::string(kSupported);
  }
  return {};
}

}  // namespace

GrantGlob normalize_grant_glob(std::string_view text, std::string_view root) {
  if (text.empty()) return refuse("an empty --path matches nothing");
  std::string_view rest = text;
  if (rest.starts_with('/')) {
    // Lexically under the root, component by component: "/rootx" is not "/root".
    if (root.empty() || !rest.starts_with(root) ||
        (rest.size() > root.size() && rest[root.size()] != '/')) {
      return refuse("is outside the root " + std::string(root) +
                    "; write a path relative to the root, or an absolute path under it");
    }
    rest.remove_prefix(root.size());
  }
  const bool directory = rest.ends_with('/');
  std::vector<std::string_view> parts;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    std::string_view c = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (c.empty() || c == ".") continue;  // "a//b" and "./a" are "a/b" and "a"
    if (c == "..") {
      return refuse(
          "'..' is not allowed: a grant names paths under the root, written relative to it "
          "(src/x, not src/../x)");
    }
    if (std::string why = component_problem(c); !why.empty()) return refuse(std::move(why));
    parts.push_back(c);
  }
  if (parts.empty()) {
    return refuse("names the root itself; leave out --path to grant the whole tree");
  }
  GrantGlob out;
  for (std::string_view c : parts) {
    if (!out.glob.empty()) out.glob += '/';
    out.glob += c;
  }
  if (directory) out.glob += '/';
  return out;
}

}  // namespace leasefs::gate
