// `leasectl fleet`: the fleet's ledger from a person's terminal, under their
// own database role (fleet/person_desk.hpp), and the central verifier of the
// chains the bridges ship (fleet/chain_verifier.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace leasefs::leasectl {

// Adds `fleet` and its subcommands; the one given sets `run`.
void add_fleet_command(CLI::App& app, std::function<int()>& run);

}  // namespace leasefs::leasectl
