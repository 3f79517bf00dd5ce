// profile_pair.h — the two sides that `diff` and `overlap` compare, and
// their functions paired.
//
// A side is a profile (files and directories, merged as every command
// merges them: reconstruct/profile_inputs.h), or one named test of it
// (`--test-a NAME`, `--test-b NAME`, or `--test NAME` for both): the counts
// the processes run with BALLARUS_TEST=NAME added, read as a profile of
// their own (core/profile_reader.h ReadNamedRun).  Two tests of one
// profile are A and B with the same inputs.  The test is an option of its
// own, not part of the argument (PROFILE@TEST): any character may be in a
// file name, and a directory named `build@2` must stay what it is.
//
// Functions are paired by assembler name and source file; of several
// copies with one name (static functions of several TUs, builds whose
// CFGs differ) those with an identical CFG pair first (SameCfg: same
// cfg_checksum, same blocks, each edge's ends and kind), then the rest in
// order.  Only pairs with the same CFG compare edge by edge.
#ifndef BALLARUS_RECONSTRUCT_PROFILE_PAIR_H_
#define BALLARUS_RECONSTRUCT_PROFILE_PAIR_H_

#include <memory>
#include <string>
#include <vector>

#include "core/profile_reader.h"
#include "reconstruct/commands.h"
#include "reconstruct/report_filter.h"
#include "reconstruct/report_model.h"

namespace ballarus {

struct Side {
  std::string test;
  LoadedReport loaded;
  std::unique_ptr<FileFilter> filter;

  const report::Report& r() const { return loaded.report; }
};

// Loads one side and prepares its filter; Fail()s on unusable inputs or
// a test the profile has no runs of (naming the tests it has).
void LoadSide(const SideSpec& spec, const FilterOptions& filter, Side* out);

// How text reports name a side: "PROFILE" or "PROFILE, test NAME".
std::string SideLabel(const Side& s);

struct FunctionPair {
  const report::FunctionReport* a = nullptr;  // null: only in B
  const report::FunctionReport* b = nullptr;  // null: only in A
  bool same_cfg = false;
};

bool SameCfg(const report::FunctionReport& a, const report::FunctionReport& b);

// The functions both filters keep, paired (see above): by (name, file)
// of A, then those of names only B has.
std::vector<FunctionPair> PairFunctions(const Side& A, const Side& B);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_PROFILE_PAIR_H_
