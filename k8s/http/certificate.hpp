#pragma once
// The server's self-signed certificate, made at start with the OpenSSL C API (no `openssl` binary
// needed at run time).

#include <string>

#include "k8s/model/status.hpp"

namespace kai::http {

/// Writes a fresh P-256 key and a self-signed certificate valid for IP 127.0.0.1 and DNS localhost
/// (the certificate is also the CA clients verify against). Files are PEM; the key is mode 0600.
model::Status write_self_signed_certificate(const std::string& cert_path, const std::string& key_path);

}  // namespace kai::http
