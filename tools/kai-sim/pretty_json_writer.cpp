// Codec unit: a JSON document written as it goes, laid out as nlohmann's dump(2).
#include "tools/kai-sim/pretty_json_writer.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace kai::sim {
namespace {

constexpr size_t kFlushAt = size_t{1} << 20;

/// As nlohmann's dump() with ensure_ascii off: the two-character escapes, \u00xx (lower-case hex) for
/// the other control characters, every other byte as it is (the strings come from validated JSON).
void append_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t plain_from = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + plain_from, i - plain_from);
    plain_from = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(text.data() + plain_from, text.size() - plain_from);
  out += '"';
}

template <typename Int>
void append_integer(std::string& out, Int n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

}  // namespace

void PrettyJsonWriter::indent(size_t depth) { buf_.append(2 * depth, ' '); }

void PrettyJsonWriter::before_element() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& level = stack_.back();
  buf_ += level.empty ? "\n" : ",\n";
  level.empty = false;
  indent(stack_.size());
}

void PrettyJsonWriter::key(std::string_view name) {
  Level& level = stack_.back();
  buf_ += level.empty ? "\n" : ",\n";
  level.empty = false;
  indent(stack_.size());
  append_escaped(buf_, name);
  buf_ += ": ";
  after_key_ = true;
}

void PrettyJsonWriter::begin_object() {
  before_element();
  buf_ += '{';
  stack_.push_back(Level{true});
}

void PrettyJsonWriter::begin_array() {
  before_element();
  buf_ += '[';
  stack_.push_back(Level{false});
}

void PrettyJsonWriter::close(char bracket) {
  const Level level = stack_.back();
  stack_.pop_back();
  if (!level.empty) {
    buf_ += '\n';
    indent(stack_.size());
  }
  buf_ += bracket;
  flush_if_full();
}

void PrettyJsonWriter::end_object() { close('}'); }
void PrettyJsonWriter::end_array() { close(']'); }

void PrettyJsonWriter::value(std::string_view text) {
  before_element();
  append_escaped(buf_, text);
}

void PrettyJsonWriter::value(bool b) {
  before_element();
  buf_ += b ? "true" : "false";
}

void PrettyJsonWriter::value(int64_t n) {
  before_element();
  append_integer(buf_, n);
}

void PrettyJsonWriter::value(uint64_t n) {
  before_element();
  append_integer(buf_, n);
}

void PrettyJsonWriter::value(double d) {
  before_element();
  buf_ += nlohmann::json(d).dump();
}

void PrettyJsonWriter::value(const std::vector<std::string>& strings) {
  begin_array();
  for (const auto& s : strings) value(std::string_view(s));
  end_array();
}

void PrettyJsonWriter::flush_if_full() {
  if (out_ == nullptr || buf_.size() < kFlushAt) return;
  out_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

std::string PrettyJsonWriter::finish() {
  buf_ += '\n';
  if (out_ == nullptr) return std::move(buf_);
  out_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
  return {};
}

}  // namespace kai::sim
