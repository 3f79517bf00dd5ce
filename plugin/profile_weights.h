// profile_weights.h — exact edge counts from an earlier ballarus profile,
// used as spanning-tree weights (-fplugin-arg-ballarus-weights=profile=FILE).
//
// With exact counts as weights the maximum spanning tree leaves the fewest
// dynamic increments any spanning-tree placement can have for that run:
// Ball & Larus' "Exact-Max" (TOPLAS 1994 §6.4).  GCC-free.
//
// The profile is read by core/profile_reader.h, the reader
// ballarus-reconstruct uses too: every function's edge counts are its
// solved flow — from its edge counters, or, for a function profiled in
// path mode alone, from its paths.
#ifndef BALLARUS_PLUGIN_PROFILE_WEIGHTS_H_
#define BALLARUS_PLUGIN_PROFILE_WEIGHTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"

namespace ballarus {

class ProfileWeights {
 public:
  // Loads FILE.  On failure returns false with a one-line message in *error
  // ("FILE: offset N: problem", as ballarus-reconstruct words it).
  bool Load(const std::string& path, std::string* error);

  // Edge counts (parallel to the function's edges; unknown edges count 0) of
  // the function with this assembler name and CFG checksum, preferring the
  // copy recorded by the TU with `identity` (static functions of different
  // TUs may share a name).  Returns false if the profile has no such
  // function.
  bool Lookup(const std::string& name, uint32_t cfg_checksum,
              uint64_t identity, std::vector<uint64_t>* counts) const;

 private:
  struct Key {
    std::string name;
    uint32_t checksum;
    bool operator<(const Key& o) const {
      return name != o.name ? name < o.name : checksum < o.checksum;
    }
  };
  // Per (name, checksum): per TU identity, the edge counts.
  std::map<Key, std::map<uint64_t, std::vector<uint64_t>>> functions_;
};

}  // namespace ballarus

#endif  // BALLARUS_PLUGIN_PROFILE_WEIGHTS_H_
