#include "ir/base64.h"

#include <array>

namespace autopar {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Alphabet index of each byte value, -1 outside it.
constexpr std::array<int8_t, 256> decode_table() {
  std::array<int8_t, 256> table{};
  for (int8_t& v : table) v = -1;
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}

}  // namespace

std::string base64_encode(const std::vector<uint8_t>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint32_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint32_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= bytes[i + 2];
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

Expected<std::vector<uint8_t>> base64_decode(std::string_view text) {
  static constexpr std::array<int8_t, 256> kTable = decode_table();
  if (text.size() % 4 != 0) {
    return make_error("base64 text has {} characters, not a multiple of 4", text.size());
  }
  size_t padding = 0;  // trailing '=' (at most 2), decoded as zero bits and dropped
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t chunk = 0;
    for (size_t k = i; k < i + 4; ++k) {
      int8_t v = k >= text.size() - padding ? 0 : kTable[static_cast<unsigned char>(text[k])];
      if (v < 0) return make_error("bad base64 character '{}' at offset {}", text[k], k);
      chunk = (chunk << 6) | static_cast<uint32_t>(v);
    }
    for (int shift = 16; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(chunk >> shift));
  }
  out.resize(out.size() - padding);
  return out;
}

}  // namespace autopar
