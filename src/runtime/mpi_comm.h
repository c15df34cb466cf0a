// Communicator: the SPMD ranks' view of MPI. A thin wrapper over an MPI
// communicator with the collectives the planner costs (comm_cost.h), on raw
// contiguous buffers of an IR dtype, so callers can pass libtorch tensors'
// data_ptr() without this header depending on libtorch.
//
// Errors come back as Status (the communicator uses MPI_ERRORS_RETURN). A rank
// that cannot continue calls abort(), which ends every rank of the job: a
// failure on one rank must never leave the others waiting in a collective.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include <mpi.h>

#include "ir/dtype.h"
#include "ir/expected.h"

namespace autopar {

// Initialises MPI once per process (MPI_THREAD_FUNNELED; libtorch's intra-op
// threads never call MPI). Finalises at exit of the returned guard.
class MpiSession {
 public:
  static Expected<MpiSession> init(int* argc, char*** argv);
  MpiSession(MpiSession&& other) noexcept : owns_(other.owns_) { other.owns_ = false; }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  MpiSession& operator=(MpiSession&&) = delete;
  ~MpiSession();

 private:
  explicit MpiSession(bool owns) : owns_(owns) {}
  bool owns_ = false;
};

class Communicator {
 public:
  static Communicator world();
  // Ranks with the same color form one sub-communicator, ordered by key.
  Expected<Communicator> split(int color, int key) const;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm native() const { return comm_; }  // for point-to-point messages

  Status barrier() const;
  // In place; reductions support f32, f64, i32, i64, c64.
  Status all_reduce_sum(void* buffer, int64_t count, DType dtype) const;
  // send: count_per_rank elements; recv: size() * count_per_rank, in rank order.
  Status all_gather(const void* send, void* recv, int64_t count_per_rank, DType dtype) const;
  // send: size() * count_per_rank elements; recv: this rank's reduced block.
  Status reduce_scatter_sum(const void* send, void* recv, int64_t count_per_rank, DType dtype) const;
  // Block i of send goes to rank i; block j of recv came from rank j.
  Status all_to_all(const void* send, void* recv, int64_t count_per_rank, DType dtype) const;
  Status broadcast(void* buffer, int64_t count, DType dtype, int root) const;
  // Max of a value over all ranks (for timings: the slowest rank decides).
  Expected<double> max_over_ranks(double value) const;
  Expected<double> sum_over_ranks(double value) const;

  // Prints the message with this rank's number to stderr and ends the job;
  // mpirun exits with `code` (ir/expected.h's exit codes).
  [[noreturn]] void abort(std::string_view message, int code = kExitRuntime) const;
  // The same for an error: its message, and its kind's exit code.
  [[noreturn]] void abort(const Error& error) const { abort(error.message, exit_code(error.kind)); }

 private:
  explicit Communicator(MPI_Comm comm);
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

// Runs body() on this rank. An exception escaping it would unwind into
// MPI_Finalize while the other ranks wait in a collective (a hang): it ends
// the whole job instead, naming the rank and the error.
template <typename Body>
int abort_job_on_exception(const Communicator& world, Body&& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    world.abort(std::string("internal error: ") + error.what(), kExitInternal);
  }
}

}  // namespace autopar
