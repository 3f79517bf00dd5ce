// metadata_gcov.cc — the gcov report extension of a function
// (GcovReportInfo, its grammar in metadata.h).
#include <cstdint>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/metadata_wire.h"
#include "core/model.h"

namespace ballarus {

using metadata_wire::PutU;
using metadata_wire::Reader;

std::vector<uint8_t> EncodeGcovReportInfo(const GcovReportInfo& info) {
  std::vector<uint8_t> out;
  PutU(&out, info.start_column);
  PutU(&out, info.end_column);
  PutU(&out, info.dropped_edges.size());
  for (uint32_t e : info.dropped_edges) PutU(&out, e);
  return out;
}

bool DecodeGcovReportInfo(const std::vector<uint8_t>& bytes,
                          GcovReportInfo* info, std::string* error) {
  *info = GcovReportInfo();
  Reader r(bytes.data(), bytes.size(), 0);
  bool ok = r.U32(&info->start_column, "start column") &&
            r.U32(&info->end_column, "end column") &&
            metadata_wire::DecodeAscending(
                &r, "dropped edge count", "dropped edge",
                "dropped edges not ascending", &info->dropped_edges);
  if (ok && r.left() != 0) ok = r.Fail(r.pos(), "trailing bytes");
  if (!ok) {
    *error = "gcov report info: byte " + std::to_string(r.err_offset()) + ": " +
             r.err();
    return false;
  }
  return true;
}

GcovReportInfo GcovReportInfoOf(const Function& f) {
  GcovReportInfo info;
  std::string err;
  for (const Extension& x : f.extensions)
    if (x.tag == kGcovReportExtensionTag &&
        DecodeGcovReportInfo(x.bytes, &info, &err)) {
      info.recorded = true;
      return info;
    }
  return GcovReportInfo();
}

}  // namespace ballarus
