// json_stream.h — JSON written as it is produced, byte for byte as
// nlohmann::ordered_json's dump(1) prints the same document (one space of
// indentation per level, "key": value, empty containers as [] and {}),
// without building the document in memory.  `show --json` of a profile
// with hundreds of thousands of blocks streams; a DOM of it would take
// gigabytes.  Strings are made valid UTF-8 (json_writer.h ValidUtf8) and
// escaped as nlohmann escapes them (", \, \b \f \n \r \t, other control
// characters as \u00xx).
#ifndef BALLARUS_RECONSTRUCT_JSON_STREAM_H_
#define BALLARUS_RECONSTRUCT_JSON_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ballarus {

class JsonOut {
 public:
  // Writes to `out` (a stdio stream), or into a string when null
  // (TakeString).
  explicit JsonOut(std::FILE* out = nullptr) : out_(out) {}
  ~JsonOut() { Flush(); }

  JsonOut& BeginObject();
  JsonOut& EndObject();
  JsonOut& BeginArray();
  JsonOut& EndArray();
  // The next value's key (inside an object).
  JsonOut& Key(const char* key);
  JsonOut& String(const std::string& s);
  JsonOut& Uint(uint64_t v);
  JsonOut& Int(int64_t v);
  JsonOut& Bool(bool v);
  JsonOut& Null();

  void Flush();
  std::string TakeString() {
    std::string s;
    s.swap(buf_);
    return s;
  }

 private:
  void BeforeValue();
  void Indent(size_t level);
  void Raw(const char* s, size_t n) { buf_.append(s, n); MaybeFlush(); }
  void Raw(const std::string& s) { Raw(s.data(), s.size()); }
  void MaybeFlush() {
    if (out_ && buf_.size() >= (1u << 20)) Flush();
  }

  std::FILE* out_;
  std::string buf_;
  // Per open container: whether it has a member yet.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_JSON_STREAM_H_
