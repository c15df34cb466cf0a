// A counter-based random generator (Philox4x32-10, Salmon et al., SC'11):
// the numbers are a pure function of (key, counter). Random ops draw element i
// of a tensor from counter = i, its index in the FULL tensor, so every device
// draws exactly the numbers the single process draws for its shard, whatever
// the sharding, without generating the rest.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace autopar {

using PhiloxBlock = std::array<uint32_t, 4>;

// Ten rounds of Philox4x32 on a 128-bit counter with a 64-bit key.
PhiloxBlock philox4x32(PhiloxBlock counter, uint64_t key);

// A uniform float in [0, 1) for element `index` of the stream `key`.
float uniform_at(uint64_t key, uint64_t index);

// The stream of one random node in one step: the run's seed and step, mixed
// with the node's name so nodes draw independent streams.
uint64_t random_stream_key(uint64_t run_key, std::string_view node_name);

// The per-step key every rank and the reference derive alike.
uint64_t step_random_key(uint64_t seed, int64_t step);

}  // namespace autopar
