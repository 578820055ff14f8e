#pragma once
// The server's self-signed certificate, made at start with the OpenSSL C API (no `openssl` binary
// needed at run time).

#include <string>
#include <vector>

#include "k8s/model/status.hpp"

namespace kai::http {

/// What a self-signed serving certificate is for.
struct CertificateRequest {
  std::string common_name = "kai-apiserver";
  std::vector<std::string> dns_names = {"localhost"};
  std::vector<std::string> ip_addresses = {"127.0.0.1"};
  int valid_days = 365;
};

/// A PEM certificate (which is also its own CA) and its PEM private key.
struct PemPair {
  std::string certificate;
  std::string private_key;
};

/// Makes a fresh P-256 key and a self-signed certificate for `request`, in memory.
model::Result<PemPair> make_self_signed_certificate(const CertificateRequest& request);

/// Writes a fresh P-256 key and a self-signed certificate valid for IP 127.0.0.1 and DNS localhost
/// (the certificate is also the CA clients verify against). Files are PEM; the key is mode 0600.
model::Status write_self_signed_certificate(const std::string& cert_path, const std::string& key_path);

}  // namespace kai::http
