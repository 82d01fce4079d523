// `locus serve SCENARIO.toml --config cluster.toml`: runs a scenario's
// servers on the verbs backend, loaded with the scenario's records and
// with their daemons (Cell's split workers, Catfish's messaging workers
// and connect RPC), until SIGINT or SIGTERM, all in this process. Its
// server endpoints take the cluster file's first entries in order (the
// design says how many a server machine has). Clients elsewhere (`locus
// run SCENARIO.toml --backend verbs --config cluster.toml`, the same
// scenario) connect and learn its memory layout over RPC. Clients that
// disconnect or die cost the server only their own connection.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
