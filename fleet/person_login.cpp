#include "fleet/person_login.hpp"

#include <libpq-fe.h>

#include <memory>

namespace leasefs::fleet {

PgConnection open_as_person(const std::string& conninfo) {
  if (!conninfo.empty()) {
    char* error = nullptr;
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
        PQconninfoParse(conninfo.c_str(), &error), &PQconninfoFree);
    if (!options) {
      std::string why = error ? error : "out of memory";
      PQfreemem(error);
      while (!why.empty() && why.back() == '\n') why.pop_back();
      throw LoginRefused("--db is not a connection string libpq reads: " + why);
    }
    for (const PQconninfoOption* o = options.get(); o->keyword; ++o) {
      if (std::string(o->keyword) == "password" && o->val && *o->val) {
        throw LoginRefused(
            "--db holds a password, which every user here could read on the command line: "
            "keep it in ~/.pgpass (or PGPASSFILE) instead");
      }
    }
  }
  return PgConnection::open(conninfo);
}

}  // namespace leasefs::fleet
