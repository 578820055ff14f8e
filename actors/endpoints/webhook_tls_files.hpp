#pragma once
// The webhooks' HTTPS server reads its certificate and key from files; a certificate kept in the
// Secret (webhook_certs.hpp) is written to a private directory of this process for it.

#include <string>

#include "k8s/http/certificate.hpp"
#include "k8s/model/status.hpp"

namespace kai::endpoints {

struct TlsFiles {
  std::string dir;  ///< Made for them; remove_tls_files() removes it.
  std::string cert_file;
  std::string key_file;  ///< Readable by its owner only.
};

/// Writes `pem` to tls.crt and tls.key in a new directory under $TMPDIR (default /tmp).
model::Result<TlsFiles> write_private_tls_files(const http::PemPair& pem);

/// Removes the directory and both files; nothing when `files.dir` is empty.
void remove_tls_files(const TlsFiles& files);

}  // namespace kai::endpoints
