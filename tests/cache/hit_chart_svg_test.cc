// RenderHitRatioSvg: a complete SVG document with one line per policy in first-seen
// order, points where the data are, and a one-value policy drawn across the chart.
#include "cache/hit_chart_svg.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace seer {
namespace {

PolicyStats Row(const std::string& policy, int64_t capacity, int64_t misses) {
  PolicyStats s;
  s.policy = policy;
  s.capacity_rows = capacity;
  s.accesses = 100;
  s.misses = misses;
  return s;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(HitChartSvgTest, OneLinePerPolicyWithLegendAndTicks) {
  // Rows out of capacity order on purpose; `none` has one value.
  const std::vector<PolicyStats> rows = {Row("belady", 400, 10), Row("belady", 40, 60), Row("lru", 400, 30),
                                         Row("lru", 40, 80), Row("none", 40, 100)};
  const std::string svg = RenderHitRatioSvg(rows, {400, 40}, 4111, "Hit ratio vs capacity");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(Count(svg, "<polyline"), 3);
  EXPECT_EQ(Count(svg, "<circle"), 5);
  for (const char* legend : {">belady<", ">lru<", ">none<"}) EXPECT_NE(svg.find(legend), std::string::npos) << legend;
  EXPECT_LT(svg.find(">belady<"), svg.find(">lru<"));
  EXPECT_LT(svg.find(">lru<"), svg.find(">none<"));
  // x ticks as % of the nodes: 40 rows ~ 0.973%, 400 rows ~ 9.73%.
  EXPECT_NE(svg.find(">0.973%<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">9.73%<"), std::string::npos);
  // belady at 40 then 400 rows (capacity order): hit ratio 0.4 then 0.9. The plot area
  // spans x 70..570 and y 50..400, so the points are (70 + 500*40/400, 400 - 350*0.4)
  // and (570, 400 - 350*0.9).
  EXPECT_NE(svg.find("points=\"120.0,260.0 570.0,85.0 \""), std::string::npos) << svg;
  // none (hit ratio 0) runs across the whole plot at y = 400.
  EXPECT_NE(svg.find("points=\"70.0,400.0 570.0,400.0\""), std::string::npos) << svg;
}

}  // namespace
}  // namespace seer
