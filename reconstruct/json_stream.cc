// json_stream.cc — see json_stream.h.
#include "reconstruct/json_stream.h"

#include <cinttypes>

#include "reconstruct/json_writer.h"

namespace ballarus {

void JsonOut::Flush() {
  if (!out_ || buf_.empty()) return;
  std::fwrite(buf_.data(), 1, buf_.size(), out_);
  buf_.clear();
}

void JsonOut::Indent(size_t level) {
  buf_ += '\n';
  buf_.append(level, ' ');
}

// A value's separator and indentation: after a key nothing (": " was
// written); in an array ",\n" and the indentation (just "\n" first).
void JsonOut::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_member_.empty()) return;
  if (has_member_.back()) buf_ += ',';
  has_member_.back() = true;
  Indent(has_member_.size());
}

JsonOut& JsonOut::BeginObject() {
  BeforeValue();
  buf_ += '{';
  has_member_.push_back(false);
  return *this;
}

JsonOut& JsonOut::EndObject() {
  const bool any = has_member_.back();
  has_member_.pop_back();
  if (any) Indent(has_member_.size());
  buf_ += '}';
  MaybeFlush();
  return *this;
}

JsonOut& JsonOut::BeginArray() {
  BeforeValue();
  buf_ += '[';
  has_member_.push_back(false);
  return *this;
}

JsonOut& JsonOut::EndArray() {
  const bool any = has_member_.back();
  has_member_.pop_back();
  if (any) Indent(has_member_.size());
  buf_ += ']';
  MaybeFlush();
  return *this;
}

JsonOut& JsonOut::Key(const char* key) {
  if (has_member_.back()) buf_ += ',';
  has_member_.back() = true;
  Indent(has_member_.size());
  buf_ += '"';
  buf_ += key;
  buf_ += "\": ";
  after_key_ = true;
  return *this;
}

JsonOut& JsonOut::String(const std::string& raw) {
  BeforeValue();
  static const char kHex[] = "0123456789abcdef";
  bool ascii = true;
  for (const char ch : raw) ascii &= static_cast<unsigned char>(ch) < 0x80;
  const std::string valid = ascii ? std::string() : ValidUtf8(raw);
  const std::string& text = ascii ? raw : valid;
  buf_ += '"';
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        buf_ += "\\\"";
        break;
      case '\\':
        buf_ += "\\\\";
        break;
      case '\b':
        buf_ += "\\b";
        break;
      case '\f':
        buf_ += "\\f";
        break;
      case '\n':
        buf_ += "\\n";
        break;
      case '\r':
        buf_ += "\\r";
        break;
      case '\t':
        buf_ += "\\t";
        break;
      default:
        if (c < 0x20) {
          buf_ += "\\u00";
          buf_ += kHex[c >> 4];
          buf_ += kHex[c & 15];
        } else {
          buf_ += ch;
        }
    }
  }
  buf_ += '"';
  return *this;
}

JsonOut& JsonOut::Uint(uint64_t v) {
  BeforeValue();
  char b[24];
  const int n = std::snprintf(b, sizeof b, "%" PRIu64, v);
  buf_.append(b, n);
  return *this;
}

JsonOut& JsonOut::Int(int64_t v) {
  BeforeValue();
  char b[24];
  const int n = std::snprintf(b, sizeof b, "%" PRId64, v);
  buf_.append(b, n);
  return *this;
}

JsonOut& JsonOut::Bool(bool v) {
  BeforeValue();
  buf_ += v ? "true" : "false";
  return *this;
}

JsonOut& JsonOut::Null() {
  BeforeValue();
  buf_ += "null";
  return *this;
}

}  // namespace ballarus
