// libFuzzer target: sequences of commands on one connection, through the real
// dispatcher and service (state, memory and ledger in a temporary directory), as
// an agent and as an approver in turn. Every reply must be a JSON object with an
// "ok"; nothing may crash, hang or recurse without bound. The first byte picks
// the shape: 0 wraps the rest in deep nesting (the bound must refuse it before
// anything walks it), anything else runs the rest line by line.
//
//   fuzz/run.sh 60 dispatcher_fuzz
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "control/commands.hpp"
#include "gate/gate.hpp"
#include "memory/ledger.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "report/event_bus.hpp"
#include "service/service.hpp"
#include "state/longrun_dir.hpp"
#include "state/state_store.hpp"

using namespace leasefs;
using nlohmann::json;

namespace {

struct World {
  World() {
    char tmpl[] = "/tmp/leasefs-fuzz-XXXXXX";
    path = ::mkdtemp(tmpl);
    root_fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    dir = std::make_unique<state::LongrunDir>(root_fd, path);
    store = std::make_unique<state::StateStore>(*dir);
    memory = std::make_unique<memory::SqliteMemoryStore>(dir->path("memory.db"));
    ledger = std::make_unique<memory::Ledger>(dir->path("memory.db"));
    service = std::make_unique<service::Service>(*store, *memory, ledger.get(), gate, bus);
    control::CommandContext ctx;
    ctx.service = service.get();
    ctx.audit_verify = [] { return json{{"ok", true}, {"records", 0}}; };
    dispatcher = std::make_unique<control::Dispatcher>(ctx, nullptr);
  }
  std::string path;
  int root_fd = -1;
  gate::Gate gate;
  report::EventBus bus;
  std::unique_ptr<state::LongrunDir> dir;
  std::unique_ptr<state::StateStore> store;
  std::unique_ptr<memory::SqliteMemoryStore> memory;
  std::unique_ptr<memory::Ledger> ledger;
  std::unique_ptr<service::Service> service;
  std::unique_ptr<control::Dispatcher> dispatcher;
};

void check(const json& reply) {
  if (!reply.is_object() || !reply.contains("ok")) std::abort();
  (void)protocol::to_line(reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  if (size < 2) return 0;
  const gate::Actor agent{100, 1000, 1000, false};
  const gate::Actor person{200, 0, 0, true};
  std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);

  if (data[0] == 0) {
    // Deep nesting inside args: far past the bound, in arrays and objects.
    size_t depth = 1 + size_t{data[1]} * 64;
    std::string line = R"({"id":1,"cmd":"grant","args":{"reason":)";
    for (size_t i = 0; i < depth; ++i) line += (i % 2) ? R"({"a":)" : "[";
    line += "0";
    for (size_t i = depth; i-- > 0;) line += (i % 2) ? "}" : "]";
    line += "}}";
    check(world.dispatcher->handle_line(line, person).reply());
    return 0;
  }
  // One connection: lines in order; the actor of each line alternates by the
  // second byte's bits.
  unsigned bits = data[1];
  size_t n = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    const gate::Actor& who = (bits >> (n++ % 8)) & 1 ? person : agent;
    auto out = world.dispatcher->handle_line(line, who);
    check(out.reply());
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return 0;
}
