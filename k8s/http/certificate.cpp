#include "k8s/http/certificate.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
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
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};

bool add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Deleter> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

}  // namespace

model::Result<PemPair> make_self_signed_certificate(const CertificateRequest& request) {
  std::unique_ptr<EVP_PKEY, Deleter> key(EVP_EC_gen("P-256"));
  if (!key) return model::Status::error("cannot generate an EC key");
  std::unique_ptr<X509, Deleter> cert(X509_new());
  if (!cert) return model::Status::error("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);
  // A random serial: two certificates made in the same second must differ.
  std::unique_ptr<BIGNUM, Deleter> serial(BN_new());
  if (!serial || BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return model::Status::error("cannot make a certificate serial number");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(request.valid_days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(request.common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::string san;
  for (const auto& ip : request.ip_addresses) san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  for (const auto& dns : request.dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + dns;
  if (san.empty()) return model::Status::error("a serving certificate needs at least one DNS name or IP address");
  if (!add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_ext(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !add_ext(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(cert.get(), NID_subject_key_identifier, "hash") ||
      !add_ext(cert.get(), NID_subject_alt_name, san.c_str())) {
    return model::Status::error("cannot add certificate extensions (subject alternative names: " + san + ")");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return model::Status::error("cannot sign the certificate");

  auto to_pem = [](auto write) -> std::string {
    std::unique_ptr<BIO, Deleter> bio(BIO_new(BIO_s_mem()));
    if (!bio || !write(bio.get())) return "";
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(n));
  };
  PemPair out;
  out.private_key = to_pem([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  out.certificate = to_pem([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()) == 1; });
  if (out.private_key.empty() || out.certificate.empty()) return model::Status::error("cannot encode PEM");
  return out;
}

model::Status write_self_signed_certificate(const std::string& cert_path, const std::string& key_path) {
  auto pem = make_self_signed_certificate(CertificateRequest{});
  if (!pem.is_ok()) return pem.status();
  {
    std::unique_ptr<FILE, Deleter> f(std::fopen(key_path.c_str(), "w"));
    if (!f) return model::Status::error("cannot write " + key_path);
    ::chmod(key_path.c_str(), 0600);
    if (std::fwrite(pem->private_key.data(), 1, pem->private_key.size(), f.get()) != pem->private_key.size()) {
      return model::Status::error("cannot write " + key_path);
    }
  }
  std::unique_ptr<FILE, Deleter> f(std::fopen(cert_path.c_str(), "w"));
  if (!f || std::fwrite(pem->certificate.data(), 1, pem->certificate.size(), f.get()) != pem->certificate.size()) {
    return model::Status::error("cannot write " + cert_path);
  }
  return model::Status::ok();
}

}  // namespace kai::http
