// gcovr_json_writer_test.cc — gcovr's JSON tracefile from hand-made
// coverage summaries: gcovr's noncode rule (its own doctest cases), the
// lines, branches and functions written, names relative to --root.
// tests/gcovr_e2e_test.cc checks the file against gcovr itself.
#include "reconstruct/gcovr_json_writer.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ballarus {
namespace {

using Json = nlohmann::json;

TEST(GcovrNonCode, GcovrsExamples) {
  // gcovr/gcov_parser.py _is_non_code's doctest.
  EXPECT_TRUE(GcovrNonCode("  // some comment!"));
  EXPECT_TRUE(GcovrNonCode("  /* some comment! */"));
  EXPECT_FALSE(GcovrNonCode("} else {"));
  EXPECT_FALSE(GcovrNonCode("}else{"));
  EXPECT_TRUE(GcovrNonCode("else"));
  EXPECT_TRUE(GcovrNonCode("{"));
  EXPECT_TRUE(GcovrNonCode("/* some comment */ {"));
  EXPECT_TRUE(GcovrNonCode("}"));
  EXPECT_TRUE(GcovrNonCode("} // some code"));
  EXPECT_FALSE(GcovrNonCode("return {};"));
}

TEST(GcovrNonCode, CommentsAndSpace) {
  EXPECT_TRUE(GcovrNonCode(""));
  EXPECT_TRUE(GcovrNonCode(" \t\f\v}\r"));
  EXPECT_TRUE(GcovrNonCode("/* a */ } /* b */"));
  EXPECT_FALSE(GcovrNonCode("/* a */ x /* b */"));
  // "//" comments go first: what is left of "/* // */ {" is "/*".
  EXPECT_FALSE(GcovrNonCode("/* // */ {"));
  EXPECT_FALSE(GcovrNonCode("/* open {"));
  EXPECT_FALSE(GcovrNonCode("else if (x)"));
}

coverage::FunctionCoverage Fn(const std::string& name,
                              const std::string& demangled, uint32_t line,
                              int64_t count) {
  coverage::FunctionCoverage f;
  f.name = name;
  f.demangled = demangled;
  f.line = line;
  f.count = count;
  return f;
}

// One file, /src/p/a.cc: lines 3 (ran twice, two branches, one never
// executed), 4 ("}" never run: noncode), 5 (code never run, with a
// branch), 6 (negative count); functions: a constructor's two symbols,
// an internal one, a C one.
coverage::Summary OneFile() {
  coverage::FileCoverage f;
  f.path = "/src/p/a.cc";
  f.file = 7;
  f.lines = {{3, 2}, {4, 0}, {5, 0}, {6, -1}};
  f.branches[3] = {{true, 2}, {false, 0}};
  f.branches[4] = {{true, 0}};
  f.branches[5] = {{false, 0}};
  f.functions["_ZN1AC2Ev"] = Fn("_ZN1AC2Ev", "A::A()", 3, 2);
  f.functions["_ZN1AC1Ev"] = Fn("_ZN1AC1Ev", "A::A()", 2, 1);
  f.functions["_GLOBAL__sub_I_a.cc"] = Fn("_GLOBAL__sub_I_a.cc", "", 9, 1);
  f.functions["__helper"] = Fn("__helper", "", 8, 0);
  f.functions["main"] = Fn("main", "", 6, -3);
  coverage::Summary s;
  s.files.push_back(f);
  return s;
}

std::string Text(uint32_t file, uint32_t line) {
  EXPECT_EQ(file, 7u);
  static const std::map<uint32_t, std::string> text = {
      {3, "  x = 1;"}, {4, "}"}, {5, "  y();"}};
  auto it = text.find(line);
  return it == text.end() ? std::string("?") : it->second;
}

std::string Write(const GcovrJsonOptions& o) {
  std::string line_text;
  return GcovrJson(
      OneFile(),
      [&](uint32_t file, uint32_t line) -> const std::string* {
        if (line == 6) return nullptr;  // unreadable: code
        line_text = Text(file, line);
        return &line_text;
      },
      o);
}

TEST(GcovrJson, LinesBranchesFunctions) {
  const std::string text = Write({});
  const Json j = Json::parse(text);
  // Keys sorted as gcovr writes them (json.dump(sort_keys=True)).
  EXPECT_EQ(text, j.dump(1) + "\n");
  EXPECT_EQ(j.at("gcovr/format_version"), "0.3");
  ASSERT_EQ(j.at("files").size(), 1u);
  const Json& f = j.at("files")[0];
  EXPECT_EQ(f.at("file"), "/src/p/a.cc");
  const Json& lines = f.at("lines");
  ASSERT_EQ(lines.size(), 3u) << lines.dump(1);  // line 4 left out
  EXPECT_EQ(lines[0], Json::parse(R"({"line_number": 3, "count": 2,
      "gcovr/noncode": false, "gcovr/excluded": false,
      "branches": [{"count": 2, "fallthrough": false, "throw": false},
                   {"count": 0, "fallthrough": false, "throw": false}]})"));
  EXPECT_EQ(lines[1].at("line_number"), 5);
  EXPECT_EQ(lines[1].at("count"), 0);
  EXPECT_EQ(lines[1].at("branches").size(), 1u);
  EXPECT_EQ(lines[2].at("line_number"), 6);
  EXPECT_EQ(lines[2].at("count"), 0);
  EXPECT_EQ(f.at("functions"), Json::parse(R"j([
      {"name": "A::A()", "lineno": 3, "execution_count": 3},
      {"name": "main", "lineno": 6, "execution_count": 0}])j"));
}

TEST(GcovrJson, InternalFunctionsOnRequest) {
  GcovrJsonOptions o;
  o.internal_functions = true;
  const Json j = Json::parse(Write(o));
  std::map<std::string, int64_t> calls;
  for (const Json& f : j.at("files")[0].at("functions"))
    calls[f.at("name")] = f.at("execution_count");
  EXPECT_EQ(calls, (std::map<std::string, int64_t>{{"A::A()", 3},
                                                   {"_GLOBAL__sub_I_a.cc", 1},
                                                   {"__helper", 0},
                                                   {"main", 0}}));
}

TEST(GcovrJson, NamesRelativeToRoot) {
  GcovrJsonOptions o;
  o.root = "/src/p";
  EXPECT_EQ(Json::parse(Write(o)).at("files")[0].at("file"), "a.cc");
  o.root = "/src/p/";
  EXPECT_EQ(Json::parse(Write(o)).at("files")[0].at("file"), "a.cc");
  o.root = "/src/pq";  // not a parent: absolute
  EXPECT_EQ(Json::parse(Write(o)).at("files")[0].at("file"), "/src/p/a.cc");
}

TEST(GcovrJson, NoFiles) {
  EXPECT_EQ(Json::parse(GcovrJson({}, nullptr, {})),
            Json::parse(R"({"files": [], "gcovr/format_version": "0.3"})"));
}

}  // namespace
}  // namespace ballarus
