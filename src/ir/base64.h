// Base64 (RFC 4648, standard alphabet, with padding) for tensor values carried
// in graph JSON files (Node::value).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"

namespace autopar {

std::string base64_encode(const std::vector<uint8_t>& bytes);
// Fails on a character outside the alphabet or a length that is not a multiple of 4.
Expected<std::vector<uint8_t>> base64_decode(std::string_view text);

}  // namespace autopar
