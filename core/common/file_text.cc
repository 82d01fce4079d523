#include "core/common/file_text.h"

#include <fstream>
#include <sstream>

namespace locus {

StatusOr<std::string> read_file_text(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open " + std::string(what));
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return not_found(path + ": cannot read " + std::string(what));
  return buf.str();
}

}  // namespace locus
