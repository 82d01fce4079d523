// The plotter of `locus reproduce` and `locus sweep`: see line_plot.h.
#include "apps/locus/line_plot.h"

#include <fstream>

#include "apps/locus/child_runs.h"

namespace locus::cli {

bool draw_line_plot(const LinePlot& p) {
  if (!run_child({{"gnuplot", "--version"}, "/dev/null"}).is_ok()) return false;
  std::ofstream g(p.gp);
  g << "set terminal png size 900,560\n"
    << "set output '" << p.png << "'\n"
    << "set datafile separator ','\nset key below\nset grid\n"
    << "set title \"" << p.title << "\" noenhanced\n"
    << "set xlabel '" << p.x_label << "' noenhanced\nset ylabel '" << p.y_label << "' noenhanced\n";
  g << "plot ";
  for (size_t s = 0; s < p.series.size(); ++s) {
    g << (s == 0 ? "" : ", ") << "'" << p.csv << "' using " << (p.numeric_x ? "1" : "0") << ":" << s + 2
      << (p.numeric_x ? "" : ":xtic(1)") << " skip 1 with linespoints title \"" << p.series[s] << "\" noenhanced";
  }
  if (!p.marks.empty())
    g << ", '-' using 1:2 with points pt 7 ps 1.5 lc rgb 'black' title '" << p.marks_title << "'\n" << p.marks << "e";
  g << "\n";
  g.close();
  if (!g) return false;
  return run_child({{"gnuplot", p.gp}, "/dev/null"}).is_ok();
}

}  // namespace locus::cli
