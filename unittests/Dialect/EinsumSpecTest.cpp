//===- EinsumSpecTest.cpp - Index spec parsing and extent inference -------===//

#include "tra/Dialect/TRA/IR/EinsumSpec.h"

#include "gtest/gtest.h"

using namespace mlir::tra;

namespace {

std::string errorOf(llvm::StringRef spec) {
  auto parsed = EinsumSpec::parse(spec);
  if (parsed)
    return "";
  return llvm::toString(parsed.takeError());
}

TEST(EinsumSpecTest, ParsesMatmul) {
  auto spec = EinsumSpec::parse("bij,bjk->bik");
  ASSERT_TRUE(bool(spec));
  EXPECT_EQ(spec->getNumInputs(), 2u);
  EXPECT_EQ(spec->getNumIndices(), 4u);
  EXPECT_EQ(spec->str(), "bij,bjk->bik");
  EXPECT_EQ(spec->inputTerm(1), "bjk");
  EXPECT_EQ(spec->outputTerm(), "bik");
  // j is the only aggregated index.
  auto reduced = spec->getReducedIndices();
  ASSERT_EQ(reduced.size(), 1u);
  EXPECT_EQ(spec->getName(reduced[0]), 'j');
  EXPECT_EQ(spec->getOutputPosition(reduced[0]), std::nullopt);
  EXPECT_EQ(spec->getInputPosition(0, reduced[0]), 2u);
  EXPECT_EQ(spec->getInputPosition(1, reduced[0]), 1u);
}

TEST(EinsumSpecTest, EmptyTermsAreScalars) {
  // As in NumPy, "->s" has one scalar input and ",s->s" two inputs.
  auto one = EinsumSpec::parse("->s");
  ASSERT_TRUE(bool(one));
  EXPECT_EQ(one->getNumInputs(), 1u);
  EXPECT_TRUE(one->getInput(0).empty());
  auto two = EinsumSpec::parse("sd,->sd");
  ASSERT_TRUE(bool(two));
  EXPECT_EQ(two->getNumInputs(), 2u);
  EXPECT_TRUE(two->getInput(1).empty());
  EXPECT_EQ(two->str(), "sd,->sd");
}

TEST(EinsumSpecTest, Identity) {
  EinsumSpec id = EinsumSpec::identity(3, 2);
  EXPECT_EQ(id.str(), "ab,ab,ab->ab");
  EXPECT_TRUE(id.getReducedIndices().empty());
}

TEST(EinsumSpecTest, Errors) {
  EXPECT_EQ(errorOf("ij"),
            "malformed index spec 'ij': expected '->' before the output term");
  EXPECT_EQ(errorOf("i->j->k"), "malformed index spec 'i->j->k': more than "
                                "one '->'");
  EXPECT_EQ(errorOf("i2->i"),
            "malformed index spec 'i2->i': unexpected character '2' in input "
            "term #0 (indices are letters a-z, A-Z)");
  EXPECT_EQ(errorOf("ij->ii"), "malformed index spec 'ij->ii': index 'i' "
                               "repeated in the output term");
  EXPECT_EQ(errorOf("ij,jj->i"), "malformed index spec 'ij,jj->i': index 'j' "
                                 "repeated in input term #1");
}

TEST(EinsumSpecTest, InfersExtents) {
  auto spec = EinsumSpec::parse("ij,jk->ik");
  ASSERT_TRUE(bool(spec));
  llvm::SmallVector<int64_t> a = {4, 8}, b = {8, 16}, c = {4, 16};
  auto extents = inferIndexExtents(*spec, {a, b}, c);
  ASSERT_TRUE(bool(extents));
  EXPECT_EQ(*extents, (llvm::SmallVector<int64_t>{4, 8, 16}));
}

TEST(EinsumSpecTest, ExtentConflictsNameOperandAndDim) {
  auto spec = EinsumSpec::parse("ij,jk->ik");
  ASSERT_TRUE(bool(spec));
  llvm::SmallVector<int64_t> a = {4, 8}, b = {9, 16}, c = {4, 16};
  auto extents = inferIndexExtents(*spec, {a, b}, c);
  ASSERT_FALSE(bool(extents));
  EXPECT_EQ(llvm::toString(extents.takeError()),
            "index 'j' has extent 8 in input #0 (dim 1) but 9 in input #1 "
            "(dim 0)");
  llvm::SmallVector<int64_t> b2 = {8, 16}, bad = {4, 15};
  auto extents2 = inferIndexExtents(*spec, {a, b2}, bad);
  ASSERT_FALSE(bool(extents2));
  EXPECT_EQ(llvm::toString(extents2.takeError()),
            "result dim 1 (index 'k') has extent 15, but the index has extent "
            "16 in input #1 (dim 1)");
}

} // namespace
