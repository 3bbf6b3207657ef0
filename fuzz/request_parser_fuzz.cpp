// libFuzzer target: arbitrary bytes through the line framer (in random chunk
// sizes, with a small line limit so the over-long path is hit often), then every
// framed line through the request parser and the reply encoder. Nothing may
// crash, hang, leak or buffer more than the limit; the parser may only throw
// Error.
//
// Build and run (clang only): fuzz/run.sh 60
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DLEASEFS_FUZZ=ON
//   cmake --build build-fuzz --target request_parser_fuzz
//   build-fuzz/fuzz/request_parser_fuzz -max_total_time=60 fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.hpp"
#include "protocol/command_registry.hpp"
#include "protocol/request.hpp"

using leasefs::Error;
namespace protocol = leasefs::protocol;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // First byte: chunk size for feeding; the rest is the stream.
  size_t chunk = 1 + data[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  constexpr size_t kLimit = 256;
  protocol::LineFramer framer(kLimit);
  while (!stream.empty()) {
    size_t n = std::min(chunk, stream.size());
    framer.feed(stream.substr(0, n));
    stream.remove_prefix(n);
    if (framer.buffered() > kLimit) std::abort();
    while (auto line = framer.next()) {
      if (line->too_long) {
        if (!line->text.empty()) std::abort();
        (void)protocol::to_line(
            protocol::error_reply(nullptr, leasefs::Errc::kLineTooLong, "too long"));
        continue;
      }
      if (line->text.size() > kLimit) std::abort();
      nlohmann::json id;
      try {
        protocol::Request req = protocol::parse_request(line->text, &id);
        if (!protocol::find_command_spec(req.cmd)) std::abort();
        if (!req.args.is_object()) std::abort();
        (void)protocol::to_line(protocol::ok_reply(req.id, req.args));
      } catch (const Error& e) {
        (void)protocol::to_line(protocol::error_reply(id, e.errc(), e.what()));
      }
    }
  }
  // The whole input as one line, without the framer's limit.
  nlohmann::json id;
  try {
    (void)protocol::parse_request(std::string_view(reinterpret_cast<const char*>(data), size), &id);
  } catch (const Error&) {
  }
  // The input inside args, nested as deep as the first byte says (up to ~16,000
  // levels): refused by the bound, never walked.
  std::string deep = R"({"cmd":"grant","args":{"reason":)";
  size_t depth = size_t{data[0]} * 64;
  for (size_t i = 0; i < depth; ++i) deep += (i % 2) ? R"({"k":)" : "[";
  deep.append(reinterpret_cast<const char*>(data + 1), size - 1);
  for (size_t i = depth; i-- > 0;) deep += (i % 2) ? "}" : "]";
  deep += "}}";
  try {
    protocol::Request req = protocol::parse_request(deep, &id);
    (void)protocol::to_line(protocol::ok_reply(req.id, req.args));
  } catch (const Error&) {
  }
  return 0;
}
