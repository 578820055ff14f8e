#include "storage/rocksdb_info_log.hpp"

#include <rocksdb/env.h>
#include <spdlog/spdlog.h>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace kai::storage {
namespace {

class SpdlogInfoLog : public rocksdb::Logger {
 public:
  SpdlogInfoLog() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}

  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char buf[1024];
    va_list copy;
    va_copy(copy, ap);
    const int n = std::vsnprintf(buf, sizeof buf, format, copy);
    va_end(copy);
    if (n < 0) return;
    std::string text(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
    const auto spd = level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? spdlog::level::err : spdlog::level::warn;
    spdlog::log(spd, "rocksdb: {}", text);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> make_rocksdb_info_log() { return std::make_shared<SpdlogInfoLog>(); }

}  // namespace kai::storage
