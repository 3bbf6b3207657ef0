#include "gate/op.hpp"

#include <array>
#include <utility>

namespace leasefs::gate {

namespace {
constexpr std::array<std::pair<std::string_view, OpClass>, 5> kClassNames{{
    {"write", kClassWrite},
    {"create", kClassCreate},
    {"rename", kClassRename},
    {"unlink", kClassUnlink},
    {"attr", kClassAttr},
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
  }
  return kClassWrite;
}

std::string_view op_name(Op op) noexcept {
  switch (op) {
    case Op::kWrite:
      return "write";
    case Op::kOpenWrite:
      return "open";
    case Op::kCreate:
      return "create";
    case Op::kMknod:
      return "mknod";
    case Op::kMkdir:
      return "mkdir";
    case Op::kUnlink:
      return "unlink";
    case Op::kRmdir:
      return "rmdir";
    case Op::kSymlink:
      return "symlink";
    case Op::kLink:
      return "link";
    case Op::kRename:
      return "rename";
    case Op::kTruncate:
      return "truncate";
    case Op::kSetattr:
      return "setattr";
    case Op::kSetxattr:
      return "setxattr";
    case Op::kRemovexattr:
      return "removexattr";
    case Op::kFallocate:
      return "fallocate";
    case Op::kCopyFileRange:
      return "copy_file_range";
  }
  return "unknown";
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
