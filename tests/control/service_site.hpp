// A real Service over a fresh root (the state on disk, SQLite memory and the
// ledger), for tests that drive the dispatcher directly.
#pragma once

#include <fcntl.h>

#include "base/unique_fd.hpp"
#include "gate/gate.hpp"
#include "memory/ledger.hpp"
#include "memory/sqlite_memory_store.hpp"
#include "report/event_bus.hpp"
#include "service/service.hpp"
#include "state/longrun_dir.hpp"
#include "state/state_store.hpp"
#include "tests/support/temp_dir.hpp"

namespace leasefs::control {

struct ServiceSite {
  ServiceSite()
      : root_fd(::open(tmp.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
        dir(root_fd.get(), tmp.path()),
        store(dir),
        memory(dir.path("memory.db")),
        ledger(dir.path("memory.db")),
        service(store, memory, &ledger, gate, bus) {}

  test::TempDir tmp;
  base::UniqueFd root_fd;
  state::LongrunDir dir;
  state::StateStore store;
  memory::SqliteMemoryStore memory;
  memory::Ledger ledger;
  gate::Gate gate;
  report::EventBus bus;
  service::Service service;
};

}  // namespace leasefs::control
