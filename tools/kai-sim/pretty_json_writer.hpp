#pragma once
// kai-sim's report, written as it is produced, in exactly the layout nlohmann's dump(2) gives a whole
// tree (two spaces per level, "key": value, empty containers as {} and []). At 150,000 pods the report
// as an nlohmann tree, one object per pod dumped and re-indented, then held as one 55 MB string, cost
// about a quarter of kai-sim's time and the last 75 MB of its peak (bench/README.md "kai-sim on
// kai-gen's 5,000-node cluster"). nlohmann has no streaming writer, hence this one; its output is
// compared with dump(2)'s on random documents (tests/what_if/pretty_json_writer_test.cpp).
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kai::sim {

class PrettyJsonWriter {
 public:
  /// Writes to `out` in chunks as the buffer fills; null keeps everything for take().
  explicit PrettyJsonWriter(std::ostream* out = nullptr) : out_(out) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The member name of the next value, inside an object.
  void key(std::string_view name);

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(bool b);
  void value(int64_t n);
  void value(uint64_t n);
  void value(int n) { value(static_cast<int64_t>(n)); }
  void value(uint32_t n) { value(static_cast<uint64_t>(n)); }
  /// Formatted by nlohmann, so that a number reads exactly as in dump() (shortest round trip, "1.0").
  void value(double d);
  void value(const std::vector<std::string>& strings);
  /// key(name) then value(v): one member of an object.
  template <class T>
  void member(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  /// Ends the document with a newline and hands the buffer on (to `out`, or returned).
  std::string finish();

 private:
  struct Level {
    bool object;
    bool empty = true;
  };
  /// Before a value or a key: the separator and the indentation the enclosing container needs.
  void before_element();
  void close(char bracket);
  void indent(size_t depth);
  void flush_if_full();

  std::ostream* out_;
  std::string buf_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace kai::sim
