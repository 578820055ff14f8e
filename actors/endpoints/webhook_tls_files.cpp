#include "actors/endpoints/webhook_tls_files.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

namespace kai::endpoints {

model::Result<TlsFiles> write_private_tls_files(const http::PemPair& pem) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kai-webhook-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return model::Status::error("webhook certificate: cannot make " + dir);
  TlsFiles files{dir, dir + "/tls.crt", dir + "/tls.key"};
  for (const auto& [path, text] :
       {std::pair{files.cert_file, pem.certificate}, std::pair{files.key_file, pem.private_key}}) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out) {
      remove_tls_files(files);
      return model::Status::error("webhook certificate: cannot write " + path);
    }
  }
  std::filesystem::permissions(files.key_file,
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return files;
}

void remove_tls_files(const TlsFiles& files) {
  if (files.dir.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(files.dir, ignored);
}

}  // namespace kai::endpoints
