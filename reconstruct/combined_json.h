// combined_json.h — the JSON report of a combined profile
// (core/combined_profile.h), written as it is produced.
//
//   {"format": "ballarus-combined", "version": 1, "n": N, "bins": B,
//    "bin_bounds": [[lo, hi], ...]   (inclusive; bin 0 is [0, 0]),
//    "observations": [label, ...],
//    "tus": [{"source", "cwd", "stamp", "runs"}, ...],
//    "functions": [ one object per line:
//      {"tu", "name", "demangled", "file", "line", "touched",
//       "entry": STATS,
//       "blocks": [{"block", STATS...}], "edges": [{"edge", "src", "dst",
//       STATS...}], "lines": [{"file", "line", STATS...}],
//       "paths": [{"number", STATS...}]} ]}
//   STATS: "n", "mean": {"exact": "p/q", "value": float}, "variance"
//   (population, the same form), "stddev", "min", "max", "histogram"
//   (observations per bin).
// Blocks, edges, lines and paths that are 0 in every observation are left
// out; a function no observation executed has "touched": false.
#ifndef BALLARUS_RECONSTRUCT_COMBINED_JSON_H_
#define BALLARUS_RECONSTRUCT_COMBINED_JSON_H_

#include <cstdio>

#include "core/combined_profile.h"

namespace ballarus {

// Writes the report of `c` (finalized) to `out`.
void WriteCombinedJson(const CombinedProfile& c, std::FILE* out);

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_COMBINED_JSON_H_
