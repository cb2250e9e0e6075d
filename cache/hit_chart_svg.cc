#include "cache/hit_chart_svg.h"

#include <algorithm>

#include <fmt/format.h>

namespace seer {
namespace {

// Policy names in the order they first appear.
std::vector<std::string> PolicyOrder(const std::vector<PolicyStats>& rows) {
  std::vector<std::string> policies;
  for (const PolicyStats& s : rows) {
    if (std::find(policies.begin(), policies.end(), s.policy) == policies.end()) policies.push_back(s.policy);
  }
  return policies;
}

}  // namespace

std::string RenderHitRatioSvg(std::vector<PolicyStats> rows, std::vector<int64_t> capacities,
                              int64_t num_nodes, const std::string& title) {
  const std::vector<std::string> policies = PolicyOrder(rows);
  std::sort(capacities.begin(), capacities.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PolicyStats& a, const PolicyStats& b) { return a.capacity_rows < b.capacity_rows; });
  const double W = 760, H = 460, left = 70, right = 190, top = 50, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  int64_t max_cap = 1;
  for (int64_t c : capacities) max_cap = std::max(max_cap, c);
  auto x_of = [&](int64_t c) { return left + pw * static_cast<double>(c) / static_cast<double>(max_cap); };
  auto y_of = [&](double r) { return top + ph * (1.0 - r); };
  const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#7f7f7f", "#9467bd", "#8c564b"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{:.0f}\" y=\"28\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
      W, H, W, H, left + pw / 2, title);
  // Axes and grid.
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n",
                     left, top, top + ph);
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\"/>\n",
                     left, top + ph, left + pw);
  for (int t = 0; t <= 10; t += 2) {
    const double r = t / 10.0;
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n",
                       left, y_of(r), left + pw, y_of(r));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}%</text>\n", left - 6,
                       y_of(r) + 4, r * 100);
  }
  for (int64_t c : capacities) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n",
                       x_of(c), top + ph, top + ph + 5);
    const double pct = num_nodes > 0 ? 100.0 * static_cast<double>(c) / static_cast<double>(num_nodes) : 0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}%</text>\n", x_of(c),
                       top + ph + 18, pct);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">cache capacity (% of {} nodes)</text>\n",
                     left + pw / 2, H - 15, num_nodes);
  svg += fmt::format("<text transform=\"translate(18,{:.1f}) rotate(-90)\" text-anchor=\"middle\">hit ratio</text>\n",
                     top + ph / 2);
  for (size_t k = 0; k < policies.size(); ++k) {
    const char* color = colors[k % (sizeof colors / sizeof colors[0])];
    std::string points;
    for (const PolicyStats& s : rows) {
      if (s.policy != policies[k]) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(s.capacity_rows), y_of(s.hit_ratio()));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x_of(s.capacity_rows),
                         y_of(s.hit_ratio()), color);
    }
    // A policy without capacity (none) is one value: draw it across the chart.
    int n_points = 0;
    double y_single = 0;
    for (const PolicyStats& s : rows) {
      if (s.policy == policies[k]) {
        ++n_points;
        y_single = y_of(s.hit_ratio());
      }
    }
    if (n_points == 1) points = fmt::format("{:.1f},{:.1f} {:.1f},{:.1f}", left, y_single, left + pw, y_single);
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, points);
    const double ly = top + 10 + 22.0 * static_cast<double>(k);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"/>\n",
                       left + pw + 20, ly, left + pw + 45, ly, color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + pw + 52, ly + 4, policies[k]);
  }
  svg += "</svg>\n";
  return svg;
}


}  // namespace seer
