// The mutating operations the gate decides on, and the op classes a grant may be
// narrowed to. Reads never reach the gate, so they have no Op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leasefs::gate {

enum class Op : uint8_t {
  kWrite,
  kOpenWrite,  // open with O_WRONLY, O_RDWR, O_TRUNC or O_APPEND
  kCreate,
  kMknod,
  kMkdir,
  kUnlink,
  kRmdir,
  kSymlink,
  kLink,
  kRename,
  kTruncate,  // setattr with a size
  kSetattr,   // setattr of mode, owner or times
  kSetxattr,
  kRemovexattr,
  kFallocate,
  kCopyFileRange,
  kExec,  // an open to run the file (execve); no class grants it (temp_sibling.hpp)
};

// Op classes, as written on the command line: --ops write,create,rename,unlink,attr
enum OpClass : uint8_t {
  kClassNone = 0,         // what no grant can give: exec of a temporary sibling
  kClassWrite = 1 << 0,   // write, open for writing, truncate, fallocate, copy_file_range
  kClassCreate = 1 << 1,  // create, mknod, mkdir, symlink, link
  kClassRename = 1 << 2,
  kClassUnlink = 1 << 3,  // unlink, rmdir
  kClassAttr = 1 << 4,    // chmod, chown, utimens, setxattr, removexattr
};
using OpMask = uint8_t;
inline constexpr OpMask kAllOps = 0x1f;

OpClass op_class(Op op) noexcept;
// Whether some grant could allow `op` (ask mode files a request only for those).
inline bool grantable(Op op) noexcept {
  return op_class(op) != kClassNone;
}
std::string_view op_name(Op op) noexcept;

// "write,create" -> mask; nullopt names the first unknown class in `unknown`.
std::optional<OpMask> parse_op_classes(const std::vector<std::string>& names,
                                       std::string* unknown = nullptr);
std::vector<std::string> op_class_names(OpMask mask);
// nullopt when `names` parse; otherwise what is wrong, naming the known classes:
// "unknown op class 'x' (known: write,create,...)". leasectl and the daemon both say it.
std::optional<std::string> op_classes_problem(const std::vector<std::string>& names);

}  // namespace leasefs::gate
