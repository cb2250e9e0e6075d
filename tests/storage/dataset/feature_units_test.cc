// FeatureUnits (storage/dataset/feature_units.h): the unit size rule on hand-worked cases,
// the id arithmetic against a node-by-node enumeration, and the cache rows' manifest.
#include "storage/dataset/feature_units.h"

#include <gtest/gtest.h>

namespace seer {
namespace {

DatasetNodeType Type(const std::string& name, int64_t count, int64_t dim, FeatureDtype dtype = FeatureDtype::kFloat32) {
  DatasetNodeType t;
  t.name = name;
  t.count = count;
  t.feature_dim = dim;
  t.feature_dtype = dtype;
  return t;
}

DatasetManifest Typed(std::vector<DatasetNodeType> types) {
  DatasetManifest m;
  m.node_types = std::move(types);
  for (const DatasetNodeType& t : m.node_types) m.num_nodes += t.count;
  return m;
}

TEST(FeatureUnitsTest, UnitSizeIsTheCheapestMultipleOfTheRowsGcd) {
  // 512 B and 1024 B rows: the gcd 512 is the only candidate <= the narrowest row.
  EXPECT_EQ(FeatureUnits::ChooseUnitBytes(Typed({Type("a", 10, 128), Type("b", 10, 256)})), 512);
  // 12 B and 32 B rows (gcd 4), as many nodes of each: per pair of nodes U=4 needs
  // (3 + 8) x 24 = 264 B, U=8 (2 + 4) x 28 = 168 B, U=12 (1 + 3) x 32 = 128 B.
  EXPECT_EQ(FeatureUnits::ChooseUnitBytes(Typed({Type("a", 10, 3), Type("b", 10, 8)})), 12);
  // Featureless types do not count; one featured type: its row.
  EXPECT_EQ(FeatureUnits::ChooseUnitBytes(Typed({Type("a", 10, 0), Type("b", 7, 64)})), 256);
  EXPECT_EQ(FeatureUnits::ChooseUnitBytes(Typed({Type("a", 10, 0)})), 0);
  // int8 rows carry their scale and bias: never split.
  EXPECT_EQ(FeatureUnits::ChooseUnitBytes(Typed({Type("a", 5, 16, FeatureDtype::kInt8), Type("b", 5, 0)})), 24);
}

TEST(FeatureUnitsTest, UnitsOfEveryNodeAgreeWithAnEnumeration) {
  const DatasetManifest m = Typed({Type("paper", 5, 8), Type("topic", 3, 0), Type("author", 4, 3)});
  auto units = FeatureUnits::ByBytes(m);
  ASSERT_TRUE(units.ok()) << units.status().ToString();
  EXPECT_FALSE(units->identity());
  ASSERT_EQ(units->unit_bytes(), 12);  // 32 B and 12 B rows
  EXPECT_EQ(units->units_per_row(0), 3);
  EXPECT_EQ(units->units_per_row(1), 0);
  EXPECT_EQ(units->units_per_row(2), 1);
  // The enumeration: type by type, node by node, each node's units in a row.
  std::vector<int64_t> node_of_unit;
  std::vector<std::vector<int64_t>> units_of_node(12);
  for (int64_t v = 0; v < 5; ++v) {
    for (int j = 0; j < 3; ++j) {
      units_of_node[static_cast<size_t>(v)].push_back(static_cast<int64_t>(node_of_unit.size()));
      node_of_unit.push_back(v);
    }
  }
  for (int64_t v = 8; v < 12; ++v) {
    units_of_node[static_cast<size_t>(v)].push_back(static_cast<int64_t>(node_of_unit.size()));
    node_of_unit.push_back(v);
  }
  ASSERT_EQ(units->num_units(), static_cast<int64_t>(node_of_unit.size()));
  for (int64_t u = 0; u < units->num_units(); ++u) {
    EXPECT_EQ(units->NodeOfUnit(u), node_of_unit[static_cast<size_t>(u)]) << "unit " << u;
    EXPECT_EQ(units->TypeOfUnit(u), node_of_unit[static_cast<size_t>(u)] < 5 ? 0 : 2) << "unit " << u;
  }
  std::vector<int64_t> batch = {9, 2, 6, 0}, want, got;
  for (int64_t v : batch) want.insert(want.end(), units_of_node[static_cast<size_t>(v)].begin(),
                                      units_of_node[static_cast<size_t>(v)].end());
  units->Expand(batch.data(), static_cast<int64_t>(batch.size()), &got);
  EXPECT_EQ(got, want);
  EXPECT_EQ(units->FirstUnit(6), -1);
  EXPECT_EQ(units->FirstUnit(9), units_of_node[9][0]);
  // A ranking of nodes as one of units, cut at the capacity.
  EXPECT_EQ(units->ExpandRanking({9, 6, 1, 3}, 3), (std::vector<int64_t>{16, 3, 4}));
  // The cache rows: units of 12 B = 3 float32 columns.
  DatasetManifest view = m;
  view.feature_dim = 8;
  const DatasetManifest rows = units->CacheRows(view);
  EXPECT_EQ(rows.num_nodes, units->num_units());
  EXPECT_EQ(rows.feature_row_bytes(), 12);
}

TEST(FeatureUnitsTest, PaddedAndEqualWidthLayoutsAreTheNodeIds) {
  const DatasetManifest mixed = Typed({Type("paper", 5, 8), Type("topic", 3, 0)});
  auto padded = FeatureUnits::Padded(mixed, 32);
  ASSERT_TRUE(padded.ok());
  EXPECT_TRUE(padded->identity());
  EXPECT_FALSE(padded->by_bytes());
  EXPECT_EQ(padded->num_units(), 8);
  EXPECT_FALSE(FeatureUnits::Padded(mixed, 16).ok());  // a row wider than the cache's
  auto equal = FeatureUnits::ByBytes(Typed({Type("paper", 5, 8), Type("author", 3, 8)}));
  ASSERT_TRUE(equal.ok());
  EXPECT_TRUE(equal->identity());
  std::vector<int64_t> got;
  const std::vector<int64_t> nodes = {7, 1};
  equal->Expand(nodes.data(), 2, &got);
  EXPECT_EQ(got, nodes);
  EXPECT_FALSE(FeatureUnits::ByBytes(Typed({Type("a", 10, 0)})).ok());
}

}  // namespace
}  // namespace seer
