// harness_test.cc — the MANIFEST parser and the annotation scanner of the
// end-to-end harness.
#include "tests/harness.h"

#include "gtest/gtest.h"

namespace {

TEST(Manifest, ParsesProgramsAndOptions) {
  std::vector<harness::Program> ps;
  std::string error;
  ASSERT_TRUE(harness::ParseManifest(
      "M",
      "# comment\n\n"
      "a  a.c\n"
      "t  t/main.cc t/x.cc   cflags=-pthread,-DX=1  # trailing\n"
      "s  s/main.c shared=libq.so:s/q.c,s/r.c\n"
      "g  g.c plain=-lgcov,-lm\n",
      &ps, &error))
      << error;
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_EQ(ps[0].name, "a");
  EXPECT_FALSE(ps[0].cxx);
  EXPECT_EQ(ps[1].sources, (std::vector<std::string>{"t/main.cc", "t/x.cc"}));
  EXPECT_EQ(ps[1].cflags, (std::vector<std::string>{"-pthread", "-DX=1"}));
  EXPECT_TRUE(ps[1].cxx);
  EXPECT_EQ(ps[2].shared_lib, "libq.so");
  EXPECT_EQ(ps[2].shared_sources,
            (std::vector<std::string>{"s/q.c", "s/r.c"}));
  EXPECT_EQ(ps[3].plain_ldflags, (std::vector<std::string>{"-lgcov", "-lm"}));
  EXPECT_TRUE(ps[3].cflags.empty());
}

TEST(Annotations, GcovCountForms) {
  EXPECT_EQ(harness::GcovCountForm(5, false, false), "5");
  EXPECT_EQ(harness::GcovCountForm(5, true, false), "5*");
  EXPECT_EQ(harness::GcovCountForm(0, true, false), "#####");
  EXPECT_EQ(harness::GcovCountForm(0, false, true), "=====");
}

TEST(Manifest, RejectsBadLinesNamingThem) {
  std::vector<harness::Program> ps;
  std::string error;
  EXPECT_FALSE(harness::ParseManifest("M", "a a.c\nb\n", &ps, &error));
  EXPECT_EQ(error, "M:2: program 'b' has no sources");
  EXPECT_FALSE(harness::ParseManifest("M", "a a.c bogus=1\n", &ps, &error));
  EXPECT_EQ(error, "M:1: unknown option 'bogus=1'");
  EXPECT_FALSE(harness::ParseManifest("M", "a a.c\na b.c\n", &ps, &error));
  EXPECT_EQ(error, "M:2: program 'a' listed twice");
  EXPECT_FALSE(
      harness::ParseManifest("M", "a a.c shared=q.so:q.c\n", &ps, &error));
  EXPECT_EQ(error, "M:1: shared library name 'q.so' is not libNAME.so");
}

// The real corpus: its MANIFEST parses, and its annotations are where the
// sources say (spot checks of two hand-derived values).
TEST(Corpus, ManifestAndAnnotations) {
  std::vector<harness::Program> ps = harness::LoadManifestOrDie();
  EXPECT_GE(ps.size(), 12u);
  for (const auto& p : ps) {
    if (p.name == "loops") {
      auto a = harness::Annotations(p);
      int n_38 = 0;
      for (const auto& kv : a) n_38 += kv.second == 38;
      EXPECT_EQ(n_38, 1);
      EXPECT_GE(a.size(), 7u);
    }
    if (p.name == "line_flags") {
      auto forms = harness::AnnotationForms(p);
      auto counts = harness::Annotations(p);
      auto at = [](uint32_t line) {
        return std::make_pair(std::string("line_flags.cc"), line);
      };
      EXPECT_EQ(forms[at(10)], "5*");
      EXPECT_EQ(counts[at(10)], 5);
      EXPECT_EQ(forms[at(26)], "=====");
      EXPECT_EQ(counts[at(26)], 0);
      EXPECT_EQ(forms[at(32)], "#####");
    }
    if (p.name == "templates") {
      auto a = harness::Annotations(p);
      bool saw_header = false;
      for (const auto& kv : a) saw_header |= kv.first.first == "common.h";
      EXPECT_TRUE(saw_header);
    }
  }
}

}  // namespace
