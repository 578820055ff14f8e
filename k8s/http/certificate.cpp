#include "k8s/http/certificate.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <memory>

namespace kai::http {
namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(FILE* f) const { std::fclose(f); }
};

bool add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Deleter> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

}  // namespace

model::Status write_self_signed_certificate(const std::string& cert_path, const std::string& key_path) {
  std::unique_ptr<EVP_PKEY, Deleter> key(EVP_EC_gen("P-256"));
  if (!key) return model::Status::error("cannot generate an EC key");
  std::unique_ptr<X509, Deleter> cert(X509_new());
  if (!cert) return model::Status::error("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(std::time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("kai-apiserver"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !add_ext(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(cert.get(), NID_subject_key_identifier, "hash") ||
      !add_ext(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost")) {
    return model::Status::error("cannot add certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return model::Status::error("cannot sign the certificate");
  {
    std::unique_ptr<FILE, Deleter> f(std::fopen(key_path.c_str(), "w"));
    if (!f) return model::Status::error("cannot write " + key_path);
    ::chmod(key_path.c_str(), 0600);
    if (PEM_write_PrivateKey(f.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
      return model::Status::error("cannot write " + key_path);
    }
  }
  std::unique_ptr<FILE, Deleter> f(std::fopen(cert_path.c_str(), "w"));
  if (!f || PEM_write_X509(f.get(), cert.get()) != 1)
    return model::Status::error("cannot write " + cert_path);
  return model::Status::ok();
}

}  // namespace kai::http
