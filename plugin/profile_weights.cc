// profile_weights.cc — see profile_weights.h.
#include "plugin/profile_weights.h"

#include "core/profile_reader.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

bool ProfileWeights::Load(const std::string& path, std::string* error) {
  ProfileRecords profile;
  std::string err;
  if (!ReadProfile(path, &profile, &err)) {
    *error = path + ": " + err;
    return false;
  }
  for (const LoadedTu& lt : profile.tus) {
    for (size_t fi = 0; fi < lt.tu.functions.size(); ++fi) {
      const Function& fn = lt.tu.functions[fi];
      const FlowResult& flow = lt.copies[fi].flow;
      std::vector<uint64_t> counts(fn.edges.size(), 0);
      for (size_t i = 0; i < counts.size(); ++i)
        counts[i] = flow.edges[i].value_or(0);
      std::vector<uint64_t>& slot =
          functions_[Key{fn.name, fn.cfg_checksum}][lt.record->identity];
      if (slot.empty()) {
        slot = std::move(counts);
      } else if (slot.size() == counts.size()) {
        for (size_t i = 0; i < counts.size(); ++i)
          slot[i] = ballarus_sat_add(slot[i], counts[i]);
      }
    }
  }
  return true;
}

bool ProfileWeights::Lookup(const std::string& name, uint32_t cfg_checksum,
                            uint64_t identity,
                            std::vector<uint64_t>* counts) const {
  auto it = functions_.find(Key{name, cfg_checksum});
  if (it == functions_.end() || it->second.empty()) return false;
  auto own = it->second.find(identity);
  if (own != it->second.end()) {
    *counts = own->second;
    return true;
  }
  // A COMDAT function recorded by other TUs: their copies summed.
  counts->clear();
  for (const auto& tu : it->second) {
    if (counts->empty()) {
      *counts = tu.second;
    } else if (counts->size() == tu.second.size()) {
      for (size_t i = 0; i < counts->size(); ++i)
        (*counts)[i] = ballarus_sat_add((*counts)[i], tu.second[i]);
    }
  }
  return true;
}

}  // namespace ballarus
