#include "gate/op.hpp"

#include <array>
#include <utility>

#include "base/enum_names.hpp"

namespace leasefs::gate {

namespace {
constexpr std::array<std::pair<std::string_view, OpClass>, 5> kClassNames{{
    {"write", kClassWrite},
    {"create", kClassCreate},
    {"rename", kClassRename},
    {"unlink", kClassUnlink},
    {"attr", kClassAttr},
}};
constexpr base::EnumNames<Op, 17> kOpNames{{
    {Op::kWrite, "write"},
    {Op::kOpenWrite, "open"},
    {Op::kCreate, "create"},
    {Op::kMknod, "mknod"},
    {Op::kMkdir, "mkdir"},
    {Op::kUnlink, "unlink"},
    {Op::kRmdir, "rmdir"},
    {Op::kSymlink, "symlink"},
    {Op::kLink, "link"},
    {Op::kRename, "rename"},
    {Op::kTruncate, "truncate"},
    {Op::kSetattr, "setattr"},
    {Op::kSetxattr, "setxattr"},
    {Op::kRemovexattr, "removexattr"},
    {Op::kFallocate, "fallocate"},
    {Op::kCopyFileRange, "copy_file_range"},
    {Op::kExec, "exec"},
}};
}  // namespace

OpClass op_class(Op op) noexcept {
  switch (op) {
    case Op::kWrite:
    case Op::kOpenWrite:
    case Op::kTruncate:
    case Op::kFallocate:
    case Op::kCopyFileRange:
      return kClassWrite;
    case Op::kCreate:
    case Op::kMknod:
    case Op::kMkdir:
    case Op::kSymlink:
    case Op::kLink:
      return kClassCreate;
    case Op::kRename:
      return kClassRename;
    case Op::kUnlink:
    case Op::kRmdir:
      return kClassUnlink;
    case Op::kSetattr:
    case Op::kSetxattr:
    case Op::kRemovexattr:
      return kClassAttr;
    case Op::kExec:
      return kClassNone;
  }
  return kClassWrite;
}

std::string_view op_name(Op op) noexcept {
  return base::enum_name(kOpNames, op);
}

std::optional<OpMask> parse_op_classes(const std::vector<std::string>& names,
                                       std::string* unknown) {
  OpMask mask = 0;
  for (const auto& name : names) {
    bool found = false;
    for (const auto& [text, cls] : kClassNames) {
      if (name == text) {
        mask |= cls;
        found = true;
      }
    }
    if (!found) {
      if (unknown) *unknown = name;
      return std::nullopt;
    }
  }
  return names.empty() ? kAllOps : mask;
}

std::vector<std::string> op_class_names(OpMask mask) {
  std::vector<std::string> out;
  for (const auto& [text, cls] : kClassNames) {
    if (mask & cls) out.emplace_back(text);
  }
  return out;
}

std::optional<std::string> op_classes_problem(const std::vector<std::string>& names) {
  std::string unknown;
  if (!names.empty() && parse_op_classes(names, &unknown)) return std::nullopt;
  std::string known;
  for (const auto& n : op_class_names(kAllOps)) known += (known.empty() ? "" : ",") + n;
  return (names.empty() ? std::string("no op class given") : "unknown op class '" + unknown + "'") +
         " (known: " + known + ")";
}

}  // namespace leasefs::gate
