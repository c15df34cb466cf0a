#include "runtime/counter_rng.h"

namespace autopar {
namespace {

// Philox4x32 constants (Random123).
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// splitmix64's finaliser: a bijective scramble of 64 bits.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

PhiloxBlock philox4x32(PhiloxBlock c, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

float uniform_at(uint64_t key, uint64_t index) {
  PhiloxBlock c = {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0};
  // 24 random bits: every value is an exact float in [0, 1).
  return static_cast<float>(philox4x32(c, key)[0] >> 8) * (1.0f / 16777216.0f);
}

uint64_t random_stream_key(uint64_t run_key, std::string_view node_name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : node_name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return mix(run_key ^ mix(h));
}

uint64_t step_random_key(uint64_t seed, int64_t step) {
  return mix(mix(seed) ^ static_cast<uint64_t>(step));
}

}  // namespace autopar
