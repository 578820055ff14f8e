// kai-sim's streaming report writer against nlohmann's dump(2): random documents, byte for byte.
#include "tools/kai-sim/pretty_json_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace kai::sim {
namespace {

using nlohmann::ordered_json;

/// Builds the same random value twice: as an nlohmann tree and through the writer.
class RandomDocument {
 public:
  explicit RandomDocument(uint32_t seed) : rng_(seed) {}

  ordered_json value(PrettyJsonWriter& w, int depth) {
    switch (pick(depth < 4 ? 8 : 6)) {
      case 0: {
        const std::string s = text();
        w.value(s);
        return s;
      }
      case 1: {
        const bool b = pick(2) == 1;
        w.value(b);
        return b;
      }
      case 2: {
        const auto n = static_cast<int64_t>(rng_()) - (int64_t{1} << 31);
        w.value(n);
        return n;
      }
      case 3: {
        const uint64_t n = (uint64_t{rng_()} << 32) | rng_();
        w.value(n);
        return n;
      }
      case 4: {
        const double d = pick(2) == 0 ? static_cast<double>(pick(17)) / 4.0
                                      : std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
        w.value(d);
        return d;
      }
      case 5: {
        std::vector<std::string> strings(pick(3));
        for (auto& s : strings) s = text();
        w.value(strings);
        return strings;
      }
      case 6: {
        ordered_json a = ordered_json::array();
        w.begin_array();
        for (int i = pick(4); i > 0; --i) a.push_back(value(w, depth + 1));
        w.end_array();
        return a;
      }
      default: {
        ordered_json o = ordered_json::object();
        w.begin_object();
        for (int i = pick(4); i > 0; --i) {
          const std::string k = text() + std::to_string(i);  // unique: ordered_json keeps the first
          w.key(k);
          o[k] = value(w, depth + 1);
        }
        w.end_object();
        return o;
      }
    }
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  /// Names, quotes, backslashes, every control character, and multi-byte UTF-8.
  std::string text() {
    static const std::vector<std::string> pieces = {"a", "pod-7", " ", "\"", "\\", "/", "é", "\xe2\x82\xac", "\x7f"};
    std::string s;
    for (int i = pick(6); i > 0; --i) {
      if (pick(4) == 0) {
        s += static_cast<char>(pick(0x20));
      } else {
        s += pieces[static_cast<size_t>(pick(static_cast<int>(pieces.size())))];
      }
    }
    return s;
  }

  std::mt19937 rng_;
};

TEST(PrettyJsonWriter, WritesWhatNlohmannsDumpWritesForRandomDocuments) {
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    RandomDocument doc(seed);
    PrettyJsonWriter w;
    const ordered_json expected = doc.value(w, 0);
    ASSERT_EQ(w.finish(), expected.dump(2) + "\n") << "seed " << seed;
  }
}

TEST(PrettyJsonWriter, StreamsInChunksWithTheSameBytes) {
  RandomDocument kept(7);
  RandomDocument streamed(7);
  PrettyJsonWriter whole;
  std::ostringstream out;
  PrettyJsonWriter chunked(&out);
  whole.begin_array();
  chunked.begin_array();
  // Enough elements to pass the writer's 1 MB flush threshold several times.
  for (int i = 0; i < 200'000; ++i) {
    kept.value(whole, 3);
    streamed.value(chunked, 3);
  }
  whole.end_array();
  chunked.end_array();
  const std::string expected = whole.finish();
  EXPECT_TRUE(chunked.finish().empty());
  EXPECT_GT(expected.size(), size_t{3} << 20);
  EXPECT_EQ(out.str(), expected);
}

TEST(PrettyJsonWriter, EmptyContainersAndNestingAsDump) {
  PrettyJsonWriter w;
  w.begin_object();
  w.key("a");
  w.begin_object();
  w.end_object();
  w.key("b");
  w.begin_array();
  w.begin_array();
  w.end_array();
  w.value(std::vector<std::string>{"x"});
  w.end_array();
  w.end_object();
  EXPECT_EQ(w.finish(), "{\n  \"a\": {},\n  \"b\": [\n    [],\n    [\n      \"x\"\n    ]\n  ]\n}\n");
}

}  // namespace
}  // namespace kai::sim
