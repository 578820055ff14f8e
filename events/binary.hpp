#pragma once
// The primitives of the log's binary records (event_codec.hpp) and of state snapshots
// (state_codec.hpp): LEB128 varints, zigzag signed integers, length-prefixed strings, IEEE-754
// doubles little-endian. The Reader never reads out of bounds: a short or damaged buffer turns it
// "not ok" and every later read returns a default, so decoders check ok() once at the end.

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace kai::events::binary {

inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline void put_i64(std::string& out, int64_t v) {
  // Zigzag keeps small negative numbers short.
  put_varint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
inline void put_str(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}
inline void put_u8(std::string& out, uint8_t v) {
  out.push_back(static_cast<char>(v));
}
inline void put_f64(std::string& out, double d) {
  uint64_t bits = std::bit_cast<uint64_t>(d);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}

/// Bounds-checked cursor: every read fails softly, so a damaged record becomes a Status.
class Reader {
 public:
  explicit Reader(std::string_view b) : p_(b.data()), end_(b.data() + b.size()) {}
  bool ok() const { return ok_; }
  bool at_end() const { return p_ == end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  /// Marks the input bad (a decoder found a value out of range).
  void fail() { ok_ = false; }

  uint8_t u8() {
    if (!ok_ || p_ == end_) return fail(), 0;
    return static_cast<uint8_t>(*p_++);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || p_ == end_) return fail(), 0;
      uint8_t b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return fail(), 0;  // More than 10 bytes: not a varint we wrote.
  }
  int64_t i64() {
    uint64_t z = varint();
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  std::string str() {
    uint64_t n = varint();
    if (!ok_ || n > remaining()) return fail(), std::string{};
    std::string s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  double f64() {
    if (!ok_ || remaining() < 8) return fail(), 0.0;
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    p_ += 8;
    return std::bit_cast<double>(bits);
  }
  /// An element count; each element takes at least one byte, which bounds allocations on bad input.
  uint64_t count() {
    uint64_t n = varint();
    if (ok_ && n > remaining()) fail();
    return ok_ ? n : 0;
  }

 private:
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace kai::events::binary
