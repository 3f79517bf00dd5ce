// profile_weights.cc — see profile_weights.h.
#include "plugin/profile_weights.h"

#include <cstring>

#include "core/flow.h"
#include "core/metadata.h"
#include "runtime/ballarus_format.h"
#include "runtime/profile_io.h"

namespace ballarus {

bool ProfileWeights::Load(const std::string& path, std::string* error) {
  ballarus_profile profile;
  char err[512];
  if (ballarus_profile_read_file(path.c_str(), &profile, err, sizeof err) !=
      0) {
    *error = path + ": " + err;
    return false;
  }
  bool ok = true;
  for (uint32_t r = 0; r < profile.n_records && ok; ++r) {
    const ballarus_profile_record& rec = profile.records[r];
    TranslationUnit tu;
    DecodeResult res = DecodeMetadata(rec.metadata, rec.meta_size, &tu);
    if (!res.ok) {
      *error = path + ": record " + std::to_string(r) + ": " + res.error;
      ok = false;
      break;
    }
    for (const Function& fn : tu.functions) {
      std::vector<Count> known =
          KnownFromCounters(fn, rec.counters, rec.n_counters);
      FlowResult flow = SolveFlow(fn, known);
      std::vector<uint64_t> counts(fn.edges.size(), 0);
      for (size_t i = 0; i < counts.size(); ++i)
        counts[i] = flow.edges[i].value_or(0);
      std::vector<uint64_t>& slot =
          functions_[Key{fn.name, fn.cfg_checksum}][rec.identity];
      if (slot.empty()) {
        slot = std::move(counts);
      } else if (slot.size() == counts.size()) {
        for (size_t i = 0; i < counts.size(); ++i)
          slot[i] = ballarus_sat_add(slot[i], counts[i]);
      }
    }
  }
  ballarus_profile_free(&profile);
  return ok;
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
