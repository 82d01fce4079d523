// The one plotter of `locus reproduce` and `locus sweep`: a gnuplot script
// drawing one line per series of a CSV table (first column x, then one
// column per series) into a PNG, run as a child process. Where gnuplot is
// not installed nothing is drawn and the tables stand alone.
#pragma once

#include <string>
#include <vector>

namespace locus::cli {

struct LinePlot {
  std::string title, x_label, y_label;
  std::string csv;  // header row, then x, series 1, series 2, ...
  std::vector<std::string> series;
  bool numeric_x = true;  // else the x values are labels, in table order
  // Extra points ("x,y" lines) drawn as black dots, e.g. a paper's figures.
  std::string marks, marks_title;
  std::string gp, png;  // the script written, the figure drawn
};

// Writes p.gp and runs gnuplot on it; false if gnuplot is absent or fails.
bool draw_line_plot(const LinePlot& p);

}  // namespace locus::cli
