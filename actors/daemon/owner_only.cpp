#include "actors/daemon/owner_only.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

namespace kai::daemon {

model::Status make_owner_only(const std::string& dir) {
  namespace fs = std::filesystem;
  ::umask(077);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return model::Status::error("cannot create " + dir + ": " + ec.message());
  constexpr fs::perms kDir = fs::perms::owner_all;
  constexpr fs::perms kFile = fs::perms::owner_read | fs::perms::owner_write;
  fs::permissions(dir, kDir, ec);
  if (ec) return model::Status::error("cannot restrict " + dir + ": " + ec.message());
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink()) continue;
    fs::permissions(it->path(), it->is_directory() ? kDir : kFile, ec);
    if (ec) return model::Status::error("cannot restrict " + it->path().string() + ": " + ec.message());
  }
  if (ec) return model::Status::error("cannot list " + dir + ": " + ec.message());
  return model::Status::ok();
}

}  // namespace kai::daemon
