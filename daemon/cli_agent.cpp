#include "daemon/cli_agent.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/inert_text.hpp"

namespace leasefs::daemon {

namespace {

namespace stdfs = std::filesystem;

// Permission as the kernel decides it for a non-root user: the owner's bits if
// USER owns it, else the group's if USER is in its group, else the others'.
bool allowed(const struct stat& st, const AgentUser& a, mode_t want_user_bits) {
  mode_t bits;
  if (st.st_uid == a.uid) {
    bits = (st.st_mode >> 6) & 7;
  } else if (std::find(a.groups.begin(), a.groups.end(), st.st_gid) != a.groups.end()) {
    bits = (st.st_mode >> 3) & 7;
  } else {
    bits = st.st_mode & 7;
  }
  return (bits & want_user_bits) == want_user_bits;
}

std::string describe(const std::string& path, const struct stat& st) {
  std::string owner = std::to_string(st.st_uid);
  if (const passwd* pw = ::getpwuid(st.st_uid)) owner = pw->pw_name;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  // The name is the agent's choice: quoted as git quotes it, never raw.
  return base::quote_name(path) + " (owner " + owner + ", mode " + mode + ")";
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' ||
          c == '-' || c == ':' || c == '@' || c == '+' || c == ',')) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<AgentUser> resolve_agent(const std::string& user, std::string* error) {
  const passwd* pw = ::getpwnam(user.c_str());
  if (!pw && !user.empty() && user.find_first_not_of("0123456789") == std::string::npos) {
    pw = ::getpwuid(static_cast<uid_t>(std::strtoul(user.c_str(), nullptr, 10)));
  }
  if (!pw) {
    *error = "--agent " + user + ": no such user (create it first, e.g. `useradd --user-group " +
             user + "`)";
    return std::nullopt;
  }
  AgentUser a;
  a.name = pw->pw_name;
  a.uid = pw->pw_uid;
  a.gid = pw->pw_gid;
  if (a.uid == 0) {
    *error = "--agent " + user +
             ": the agent must not be root (root is an approver and may grant itself)";
    return std::nullopt;
  }
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (::getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
  }
  groups.resize(static_cast<size_t>(n));
  a.groups = std::move(groups);

  // The socket and status.md go to USER's primary group: it must be USER's alone,
  // or whoever else is in it reaches the socket too.
  std::vector<std::string> others;
  if (const group* gr = ::getgrgid(a.gid)) {
    for (char** m = gr->gr_mem; m && *m; ++m) {
      if (a.name != *m) others.push_back(*m);
    }
  }
  ::setpwent();
  while (const passwd* p = ::getpwent()) {
    if (p->pw_gid == a.gid && a.name != p->pw_name) others.push_back(p->pw_name);
  }
  ::endpwent();
  if (!others.empty()) {
    std::string names;
    for (const auto& o : others) names += (names.empty() ? "" : ", ") + o;
    const group* gr = ::getgrgid(a.gid);
    const std::string gname = gr ? gr->gr_name : std::to_string(a.gid);
    *error = "--agent " + user + ": the socket and status.md go to " + a.name + "'s group " +
             gname + ", which " + names + (others.size() == 1 ? " is" : " are") + " in too. Give " +
             a.name + " a group of its own, then mount again:\n  groupadd " + a.name +
             "-agent && usermod -g " + a.name + "-agent " + a.name;
    return std::nullopt;
  }
  return a;
}

std::optional<std::string> check_agent_can_reach(const std::string& root, const AgentUser& a) {
  // Every directory above the root must let USER through.
  for (stdfs::path p = stdfs::path(root).parent_path();; p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && !allowed(st, a, 1)) {
      return a.name + " cannot reach " + root + ": " + describe(p.string(), st) +
             " does not let it through. Open it, then mount again:\n  chmod o+x " +
             shell_quote(p.string());
    }
    if (p == p.parent_path()) break;
  }
  return std::nullopt;
}

std::optional<std::string> entries_agent_cannot_write(const std::string& tree,
                                                      const std::string& root, const AgentUser& a) {
  constexpr size_t kNamed = 5;  // a few, not a listing of the tree
  size_t checked = 0, refused = 0;
  std::vector<std::string> examples, named;
  auto check = [&](const std::string& path, bool top) {
    struct stat st {};
    // The top is followed: it may be /proc/self/fd/N.
    if ((top ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0 ||
        S_ISLNK(st.st_mode)) {
      return;
    }
    ++checked;
    // USER's own entries never count: their owner may chmod them (git's objects
    // are 0444). Others need write, and a directory search too.
    if (st.st_uid == a.uid || allowed(st, a, S_ISDIR(st.st_mode) ? 3 : 2)) return;
    if (++refused > kNamed) return;
    named.push_back(root + path.substr(tree.size()));
    examples.push_back(describe(named.back(), st));
  };
  check(tree, true);
  std::error_code ec;
  stdfs::recursive_directory_iterator it(tree, stdfs::directory_options::skip_permission_denied,
                                         ec),
      end;
  for (; !ec && it != end; it.increment(ec)) {
    // .longrun is the daemon's.
    if (it.depth() == 0 && it->path().filename() == ".longrun") {
      it.disable_recursion_pending();
      continue;
    }
    check(it->path().string(), false);
  }
  if (ec)
    return "not checked what " + a.name + " may write: cannot read " + root + " (" + ec.message() +
           ")";
  if (refused == 0) return std::nullopt;

  std::string out = a.name + " (uid " + std::to_string(a.uid) + ") cannot write " +
                    std::to_string(refused) + " of " + std::to_string(checked) + " entries in " +
                    root + ", and a lease does not change that" +
                    (refused > named.size() ? ", e.g.:\n" : ":\n");
  for (const auto& e : examples) out += "  " + e + "\n";
  // A few inside the tree: each by name, since one may be a secret kept from the
  // agent on purpose. Many, or the root itself: the whole tree.
  std::string fix = "chown " + shell_quote(a.name) + ":";
  // A name that needs quoting to be shown is not put in a command to paste.
  const bool plain = std::all_of(named.begin(), named.end(),
                                 [](const std::string& n) { return base::quote_name(n) == n; });
  if (plain && refused <= named.size() && named.front() != root) {
    for (const auto& n : named) fix += " " + shell_quote(n);
  } else {
    fix = "chown -R " + shell_quote(a.name) + ": " + shell_quote(root);
  }
  out += "leasefs mounts anyway and leaves them as they are. If " + a.name +
         " should change them, give them to it (leasefs keeps .longrun for itself):\n  " + fix;
  return out;
}

}  // namespace leasefs::daemon
