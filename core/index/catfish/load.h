// The data rectangles a Catfish server loads before a run: rectangle `id`
// (0 .. index.rectangles-1) is a function of the run's seed and the id
// alone, drawn from the paper's spatial workload (workload/spatial.h). So
// every backend loads the same tree for a seed, and a checker in another
// process (the verbs tests' oracle) can rebuild what a `locus serve`
// loaded.
#pragma once

#include <cstdint>

#include "core/index/catfish/config.h"
#include "core/index/catfish/layout.h"
#include "core/index/catfish/store.h"

namespace locus::catfish {

Rect loaded_rectangle(uint64_t seed, uint64_t id);

// The store a server loads the scenario's rectangles into: node size from
// the config, and room for the loaded tree at minimum fill twice over and
// for growth. The driver and the model (which builds the same tree) share it.
StoreOptions loaded_store_options(const CatfishConfig& config);

}  // namespace locus::catfish
