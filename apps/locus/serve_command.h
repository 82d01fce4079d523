// `locus serve --config cluster.toml --node N`: runs server N of a cluster
// file as a Pilaf server on the verbs backend, loaded with a YCSB record set,
// until SIGINT or SIGTERM. `--index cell` serves a Cell tree over nodes 0 to
// --servers - 1, `--index catfish` a Catfish R-tree (connect node 0, its
// --workers messaging workers on nodes 1 to --workers), from one process.
// Clients elsewhere (`locus bench --backend verbs --config cluster.toml`)
// connect to it and learn its memory layout over RPC. Clients that
// disconnect or die cost the server only their own connection.
#pragma once

#include <CLI/CLI.hpp>

namespace locus::cli {

void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace locus::cli
