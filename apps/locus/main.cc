// locus: the command line. Each subcommand lives in its own file and
// registers itself here.
#include <string>

#include <CLI/CLI.hpp>

#include "apps/locus/bench_command.h"
#include "apps/locus/calibrate_command.h"
#include "apps/locus/model_command.h"
#include "apps/locus/reproduce_command.h"
#include "apps/locus/serve_command.h"
#include "apps/locus/run_command.h"
#include "apps/locus/sweep_command.h"
#include "core/designs/designs.h"

int main(int argc, char** argv) {
  // The designs this binary has, from the registry: --help names only those.
  std::string designs;
  for (const locus::design::Design& d : locus::designs::registry().designs()) {
    designs += "\n  " + d.type.name + ": " + d.type.summary;
  }
  CLI::App app{"locus: RDMA-accessible distributed index structures on SimGrid, loopback and verbs backends.\n"
               "Designs (a scenario's index.type):" + designs};
  app.require_subcommand(1);
  // Bad arguments get one line naming the option; --help has the rest.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("locus: ") + e.what() + " (see --help)\n";
  });
  int exit_code = 0;
  locus::cli::add_run_commands(app, exit_code);
  locus::cli::add_model_commands(app, exit_code);
  locus::cli::add_bench_command(app, exit_code);
  locus::cli::add_calibrate_command(app, exit_code);
  locus::cli::add_serve_command(app, exit_code);
  locus::cli::add_reproduce_command(app, exit_code);
  locus::cli::add_sweep_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
