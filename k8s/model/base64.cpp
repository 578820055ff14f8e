#include "k8s/model/base64.hpp"

#include <openssl/evp.h>

#include <cctype>

namespace kai::model {

std::string base64_encode(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> base64_decode(const std::string& text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean += c;
  }
  if (clean.size() % 4 != 0) return Status::error("not base64 (length is not a multiple of 4)");
  std::string out(clean.size() / 4 * 3 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return Status::error("not base64");
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t length = static_cast<size_t>(n);
  if (!clean.empty() && clean.back() == '=') --length;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') --length;
  out.resize(length);
  return out;
}

}  // namespace kai::model
