// trace_program.cc — see trace_program.h.
#include "reconstruct/trace_program.h"

#include <cstring>
#include <map>

#include "core/metadata.h"
#include "core/trace_ids.h"
#include "runtime/ballarus_format.h"

namespace ballarus {

namespace {

// The plan of a traced function; a naive plan (flags bit 0) is decoded
// as the same words without the flag.  All plans must agree on it.
bool DecodePlan(const Function& fn, std::vector<uint8_t> bytes,
                TraceProgram* out, TraceProgramFunction* f,
                std::string* error) {
  const bool naive = !bytes.empty() && (bytes[0] & kTracePlanNaive) != 0;
  if (naive) bytes[0] &= static_cast<uint8_t>(~kTracePlanNaive);
  TracePlan plan;
  if (!DecodeTracePlanExtension(fn, bytes, &plan, error)) return false;
  const bool first = out->plans_seen++ == 0;
  if (!first && naive != out->naive) {
    *error = "function " + fn.name + ": mode=trace-naive and mode=trace "
             "functions mixed";
    return false;
  }
  out->naive = naive;
  f->plan = std::move(plan);
  return true;
}

// Appends the functions of `tu` (which must outlive *out).
bool AddTu(const TranslationUnit& tu, TraceProgram* out, std::string* error) {
  const uint32_t stamp = static_cast<uint32_t>(TuIdentity(tu));
  for (uint32_t i = 0; i < tu.functions.size(); ++i) {
    const Function& fn = tu.functions[i];
    out->ids.emplace(std::make_pair(stamp, i), out->functions.size());
    TraceProgramFunction f{&fn, &tu, std::nullopt};
    if (const Extension* x = FindTracePlanExtension(fn)) {
      if (!DecodePlan(fn, x->bytes, out, &f, error)) return false;
    }
    out->functions.push_back(std::move(f));
  }
  return true;
}

// The TUs of the trace files' METADATA records that no profile holds;
// `builds` maps each identity already loaded to its stamp and source.
bool AddMetadata(const std::vector<TraceMetadata>& metadata,
                 std::map<uint64_t, std::pair<uint64_t, std::string>>* builds,
                 TraceProgram* out, std::string* file, std::string* error) {
  for (const TraceMetadata& m : metadata) {
    *file = m.file;
    auto tu = std::make_unique<TranslationUnit>();
    const DecodeResult d = DecodeMetadata(m.blob.data(), m.blob.size(), tu.get());
    if (!d.ok) {
      *error = "METADATA record: " + d.error;
      return false;
    }
    ballarus_meta_header h;
    std::memcpy(&h, m.blob.data(), sizeof h);  // DecodeMetadata checked it
    const auto [it, added] =
        builds->emplace(h.identity, std::make_pair(h.stamp, "the one before"));
    if (!added && it->second.first != h.stamp) {
      *error = "TU " + tu->source + ": its METADATA record is another "
               "build than " + it->second.second + " (rebuilt since?)";
      return false;
    }
    if (!added) continue;
    if (!AddTu(*tu, out, error)) return false;
    out->trace_tus.push_back(std::move(tu));
  }
  return true;
}

}  // namespace

bool LoadTraceProgram(const std::vector<std::string>& profiles,
                      TraceProgram* out, std::string* file,
                      std::string* error,
                      const std::vector<TraceMetadata>& metadata) {
  std::map<uint64_t, std::pair<uint64_t, std::string>> builds;
  for (const std::string& path : profiles) {
    auto records = std::make_unique<ProfileRecords>();
    *file = path;
    if (!ReadProfile(path, records.get(), error)) return false;
    for (const LoadedTu& t : records->tus) {
      builds.emplace(t.record->identity,
                     std::make_pair(t.record->stamp, "the profile " + path));
      if (!AddTu(t.tu, out, error)) return false;
    }
    out->profiles.push_back(std::move(records));
  }
  if (!AddMetadata(metadata, &builds, out, file, error)) return false;
  out->empty_plans.resize(out->functions.size());
  for (size_t i = 0; i < out->functions.size(); ++i) {
    const TraceProgramFunction& f = out->functions[i];
    out->regen.push_back(
        {f.fn, f.plan ? &*f.plan : &out->empty_plans[i]});
  }
  return true;
}

std::string TraceStreamProblem(const TraceProgram& p,
                               const std::vector<TraceEvent>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (e.kind != TraceEventKind::kEnter) continue;
    if (p.functions[e.id].plan) continue;
    return "event " + std::to_string(i) + ": kEnter of " +
           p.functions[e.id].fn->name + ", which has no trace plan";
  }
  return "";
}


int64_t TraceProgram::Resolve(uint32_t tu_stamp, uint32_t index) const {
  auto it = ids.find({tu_stamp, index});
  return it == ids.end() ? -1 : static_cast<int64_t>(it->second);
}

}  // namespace ballarus
