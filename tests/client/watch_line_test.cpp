// The reflector's per-line scan: types, the object handed on byte for byte, resourceVersions,
// ERROR statuses, malformed lines refused with a reason, and random / truncated / oversized input
// that never crashes.

#include "k8s/client/watch_line.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace kai::k8s {
namespace {

using nlohmann::json;

json pod(const std::string& rv) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"resourceVersion", rv}, {"labels", {{"a", "b"}}}}},
      {"spec", {{"containers", json::array({{{"name", "c"}}})}}}};
}

TEST(WatchLine, EventsGiveTheirTypeObjectAndResourceVersion) {
  const std::pair<const char*, WatchLineType> types[] = {{"ADDED", WatchLineType::kAdded},
                                                         {"MODIFIED", WatchLineType::kModified},
                                                         {"DELETED", WatchLineType::kDeleted},
                                                         {"BOOKMARK", WatchLineType::kBookmark}};
  for (const auto& [name, type] : types) {
    const std::string object = pod("42").dump();
    const std::string line = R"({"type":")" + std::string(name) + R"(","object":)" + object + "}";
    auto scanned = scan_watch_line(line);
    ASSERT_TRUE(scanned.is_ok()) << scanned.message();
    EXPECT_EQ(scanned->type, type);
    EXPECT_EQ(scanned->object, object);  // as received, not re-serialised
    EXPECT_EQ(scanned->id.resource_version, "42");
  }
}

TEST(WatchLine, FieldOrderAndWhitespaceDoNotMatter) {
  const std::string line =
      "{ \"object\" : { \"spec\": {}, \"metadata\" : {\"name\":\"p\", \"resourceVersion\" : \"7\" } } ,"
      " \"type\" : \"ADDED\" }";
  auto scanned = scan_watch_line(line);
  ASSERT_TRUE(scanned.is_ok()) << scanned.message();
  EXPECT_EQ(scanned->id.resource_version, "7");
  EXPECT_EQ(json::parse(scanned->object)["metadata"]["name"], "p");
  EXPECT_EQ(scanned->object.back(), '}');
}

TEST(WatchLine, ErrorEventsCarryTheStatusCodeAndMessage) {
  auto scanned = scan_watch_line(
      R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (90)","reason":"Expired","code":410}})j");
  ASSERT_TRUE(scanned.is_ok()) << scanned.message();
  EXPECT_EQ(scanned->type, WatchLineType::kError);
  EXPECT_EQ(scanned->error_code, 410);
  EXPECT_EQ(scanned->error_message, "too old resource version: 5 (90)");
}

TEST(WatchLine, MalformedLinesAreRefusedWithAReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"this is not json", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {R"({"type":"ADDED"})", "no object"},
      {R"({"object":{}})", "no type"},
      {R"({"type":3,"object":{}})", "type is not a string"},
      {R"({"type":"ADDED","object":"a string"})", "object is not an object"},
      {R"({"type":"WEIRD","object":{}})", "unknown event type WEIRD"},
      {R"({"type":"ADDED","object":{"metadata":{"name":"p")", ""},
  };
  for (const auto& [line, reason] : cases) {
    auto scanned = scan_watch_line(line);
    ASSERT_FALSE(scanned.is_ok()) << line;
    EXPECT_NE(scanned.message().find(reason), std::string::npos) << line << " -> " << scanned.message();
  }
}

// Random bytes, truncations, flipped bytes and a 4 MiB line: an answer (either way) every time.
TEST(WatchLine, RandomTruncatedAndOversizedInputNeverCrashes) {
  std::mt19937_64 rng(11);
  const std::string good = json{{"type", "MODIFIED"}, {"object", pod("99")}}.dump();
  size_t accepted = 0;
  for (size_t cut = 0; cut <= good.size(); ++cut) accepted += scan_watch_line(good.substr(0, cut)).is_ok();
  EXPECT_EQ(accepted, 1u);  // only the whole line
  for (int i = 0; i < 5000; ++i) {
    std::string t = good;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
      t[rng() % t.size()] = static_cast<char>(rng() % 256);
    auto scanned = scan_watch_line(t);
    if (scanned.is_ok()) {
      EXPECT_LE(scanned->object.size(), t.size());
    }
  }
  for (int i = 0; i < 500; ++i) {
    std::string t(rng() % 300, '\0');
    for (char& c : t) c = "{}[]\":,ab01 \\"[rng() % 13];
    (void)scan_watch_line(t);
  }
  json big = pod("1");
  big["metadata"]["annotations"] = {{"pad", std::string(4 << 20, 'x')}};
  auto scanned = scan_watch_line(json{{"type", "ADDED"}, {"object", big}}.dump());
  ASSERT_TRUE(scanned.is_ok()) << scanned.message();
  EXPECT_EQ(scanned->id.resource_version, "1");
}

}  // namespace
}  // namespace kai::k8s
