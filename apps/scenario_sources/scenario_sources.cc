// scenario_sources: checks that every cost in the shipped scenarios says
// where it comes from (issue 15, "no invented numbers"). A simulated figure
// is only as good as its inputs, so each cost, rate, latency or bandwidth a
// scenario gives must carry its source next to it, where a reader of the
// file sees it: in the comment on the key's line, or in the comment block
// directly above it (over other key lines, not past a blank line or a
// table header).
//
// A cost key: any number (or array of numbers) under platform.nic,
// platform.cpu, platform.disk, platform.power and the link tables
// (platform.link, host_link, rack_uplink, pcie), and anywhere else a key
// named with a cost unit (_us, _ns, _gbps, _per_s); in an experiment file
// (scenarios/papers) a `set` override "key=value" of such a key.
// A source (docs/simulator.md, "Where every number comes from"):
//  * "calibration.md" and the testbed it is from (Pilaf, Cell, Catfish,
//    Nessie, NAM): a calibration input or arithmetic on one;
//  * "measured" with the `locus ...` command (in backquotes) and the date
//    (YYYY-MM-DD): measured on a named machine;
//  * a public figure's address (https://...): a vendor datasheet or a spec;
//  * "run setting:": a choice that is no hardware figure (a model case's
//    deliberately unbounded resource, a planning input).
// Every simulated scenario must also give the figures every run uses
// (link and PCIe bandwidth and latency, the NIC's read/send/recv curves,
// its write and atomic curves where the design uses them, a two-level
// topology's rack uplink), so none is left at a code default unseen.
//
//   scenario_sources DIR_OR_FILE...   (exit 0: all sourced; 1: lists each gap)
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct File {
  std::string path;
  std::vector<std::string> lines;  // 0-based; toml++ lines are 1-based
};

int failures = 0;
int checked = 0;

void fail(const File& f, uint32_t line, const std::string& what) {
  std::printf("%s:%u: %s\n", f.path.c_str(), line, what.c_str());
  ++failures;
}

// The comment of a line: from the first '#' outside a string.
std::string comment_of(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(i + 1);
    }
  }
  return {};
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

bool comment_only(const std::string& line) {
  const size_t i = line.find_first_not_of(" \t");
  return i != std::string::npos && line[i] == '#';
}

bool table_header(const std::string& line) {
  const size_t i = line.find_first_not_of(" \t");
  return i != std::string::npos && line[i] == '[';
}

// The text a key's source may be in: its line's comment and the comment
// block directly above it, over any key lines between (a block over
// several keys covers each), not past a blank line or a table header.
std::string source_text(const File& f, uint32_t line) {
  uint32_t i = line - 1;  // 1-based line above the key
  while (i >= 1 && !blank(f.lines[i - 1]) && !table_header(f.lines[i - 1]) && !comment_only(f.lines[i - 1])) --i;
  uint32_t first = i + 1;
  while (i >= 1 && comment_only(f.lines[i - 1])) first = i--;
  std::string text;
  for (uint32_t j = first; j < line; ++j)
    if (comment_only(f.lines[j - 1])) text += comment_of(f.lines[j - 1]) + "\n";
  return text + comment_of(f.lines[line - 1]);
}

bool has_source(const std::string& text) {
  static const std::regex calibration(R"(calibration\.md)");
  static const std::regex testbed(R"(\b(Pilaf|Cell|Catfish|Nessie|NAM)\b)");
  static const std::regex measured(R"([Mm]easured)");
  static const std::regex command("`locus [^`]+`");
  static const std::regex date(R"(\b20\d\d-\d\d-\d\d\b)");
  static const std::regex url(R"(https?://\S+)");
  static const std::regex run_setting(R"(run setting:)");
  if (std::regex_search(text, calibration) && std::regex_search(text, testbed)) return true;
  if (std::regex_search(text, measured) && std::regex_search(text, command) && std::regex_search(text, date))
    return true;
  return std::regex_search(text, url) || std::regex_search(text, run_setting);
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool starts_with(const std::string& s, std::string_view head) { return s.rfind(head, 0) == 0; }

// Whether a dotted key names a cost (see the file comment).
bool is_cost_key(const std::string& path) {
  for (const char* section : {"platform.nic.", "platform.cpu.", "platform.disk.", "platform.power.", "platform.link.",
                              "platform.host_link.", "platform.rack_uplink.", "platform.pcie."})
    if (starts_with(path, section)) return path != "platform.nic.model";
  const std::string leaf = path.substr(path.rfind('.') + 1);
  for (const char* unit : {"_us", "_ns", "_gbps", "_per_s"})
    if (ends_with(leaf, unit)) return true;
  return false;
}

bool numeric(const toml::node& n) {
  if (n.is_number()) return true;
  if (const toml::array* a = n.as_array())
    return !a->empty() && std::all_of(a->begin(), a->end(), [](const toml::node& e) { return numeric(e); });
  return false;
}

void check_value(const File& f, const std::string& path, const toml::node& n) {
  ++checked;
  const uint32_t line = n.source().begin.line;
  if (!has_source(source_text(f, line))) fail(f, line, "'" + path + "' has no source beside it");
}

void walk(const File& f, const toml::table& t, const std::string& prefix) {
  for (const auto& [k, v] : t) {
    const std::string path = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      walk(f, *sub, path);
    } else if (const toml::array* arr = v.as_array(); arr != nullptr && arr->is_array_of_tables()) {
      for (const toml::node& e : *arr) walk(f, *e.as_table(), path);
    } else if (numeric(v) && is_cost_key(path)) {
      check_value(f, path, v);
    }
  }
}

// An experiment's `set` overrides ("key=value") of cost keys.
void check_sets(const File& f, const toml::table& t, const std::string& where) {
  const toml::array* sets = t["set"].as_array();
  if (sets == nullptr) return;
  for (const toml::node& e : *sets) {
    const auto s = e.value<std::string>();
    if (!s || s->find('=') == std::string::npos) continue;
    const std::string key = s->substr(0, s->find('='));
    const std::string value = s->substr(s->find('=') + 1);
    if (!is_cost_key(key) || value.empty() || value.find_first_not_of("0123456789.eE+-") != std::string::npos) continue;
    ++checked;
    const uint32_t line = e.source().begin.line;
    if (!has_source(source_text(f, line))) fail(f, line, where + " sets '" + key + "' with no source beside it");
  }
}

// The figures every simulated run uses, which a scenario must not leave to
// the code's defaults.
void check_required(const File& f, const toml::table& doc) {
  const toml::table* platform = doc["platform"].as_table();
  const uint32_t line = platform != nullptr ? platform->source().begin.line : 1;
  auto need = [&](std::initializer_list<const char*> alternatives, const char* field) {
    for (const char* table : alternatives)
      if (doc.at_path(std::string("platform.") + table + "." + field)) return;
    fail(f, line,
         std::string("platform.") + *alternatives.begin() + "." + field +
             " is not given (the code's default would be used unseen)");
  };
  for (const char* field : {"bandwidth_gbps", "latency_us"}) {
    need({"link", "host_link"}, field);
    need({"pcie"}, field);
  }
  for (const char* curve : {"read", "send", "recv"})
    if (!doc.at_path(std::string("platform.nic.") + curve))
      fail(f, line, std::string("platform.nic.") + curve + " is not given (the code's default would be used unseen)");
  // The designs whose clients WRITE (Catfish's rings, Nessie, NAM) or CAS
  // (Nessie, NAM): the code's write and atomic curves have no source.
  const std::string type = doc.at_path("index.type").value_or(std::string{});
  auto need_curve = [&](const char* curve) {
    if (!doc.at_path(std::string("platform.nic.") + curve))
      fail(f, line, std::string("platform.nic.") + curve + " is not given and index.type '" + type + "' uses it");
  };
  if (type == "catfish" || type == "nessie" || type == "nam") need_curve("write");
  if (type == "nessie" || type == "nam") need_curve("atomic");
  if (doc.at_path("platform.topology").value_or(std::string{}) == "two-level")
    for (const char* field : {"bandwidth_gbps", "latency_us"}) need({"rack_uplink"}, field);
}

void check_file(const fs::path& p) {
  File f{p.string(), {}};
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) f.lines.push_back(line);
  toml::table doc;
  try {
    doc = toml::parse_file(p.string());
  } catch (const toml::parse_error& e) {
    fail(f, e.source().begin.line, "does not parse: " + std::string(e.description()));
    return;
  }
  if (const toml::table* experiment = doc["experiment"].as_table()) {
    check_sets(f, *experiment, "[experiment]");
    if (const toml::array* series = doc["series"].as_array())
      for (const toml::node& s : *series)
        if (const toml::table* st = s.as_table()) check_sets(f, *st, "[[series]]");
    return;
  }
  walk(f, doc, "");
  check_required(f, doc);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scenario_sources DIR_OR_FILE...\n");
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(e.path());
    } else if (fs::exists(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "scenario_sources: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) check_file(p);
  std::printf("%zu scenario files, %d cost figures checked, %d without a source\n", files.size(), checked, failures);
  return failures == 0 ? 0 : 1;
}
