// Wall-clock seconds for the planner's reports (build, solve, sweep steps).
#pragma once

#include <chrono>

namespace autopar::planner {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace autopar::planner
