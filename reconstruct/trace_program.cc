// trace_program.cc — see trace_program.h.
#include "reconstruct/trace_program.h"

#include "core/metadata.h"
#include "core/trace_ids.h"

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

}  // namespace

bool LoadTraceProgram(const std::vector<std::string>& profiles,
                      TraceProgram* out, std::string* file,
                      std::string* error) {
  for (const std::string& path : profiles) {
    auto records = std::make_unique<ProfileRecords>();
    *file = path;
    if (!ReadProfile(path, records.get(), error)) return false;
    for (const LoadedTu& t : records->tus) {
      const uint32_t stamp = static_cast<uint32_t>(TuIdentity(t.tu));
      for (uint32_t i = 0; i < t.tu.functions.size(); ++i) {
        const Function& fn = t.tu.functions[i];
        out->ids.emplace(std::make_pair(stamp, i), out->functions.size());
        TraceProgramFunction f{&fn, &t.tu, std::nullopt};
        if (const Extension* x = FindTracePlanExtension(fn)) {
          if (!DecodePlan(fn, x->bytes, out, &f, error)) return false;
        }
        out->functions.push_back(std::move(f));
      }
    }
    out->profiles.push_back(std::move(records));
  }
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
