// MPI C API calls behind Communicator (see mpi_comm.h).
#include "runtime/mpi_comm.h"
#include "runtime/fault_injection.h"
#include "runtime/process_memory.h"

#include <climits>
#include <cstdlib>
#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace autopar {
namespace {

Status check(int code, std::string_view what) {
  if (code == MPI_SUCCESS) return ok_status();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return make_error_of(ErrorKind::kRuntime, "MPI {} failed: {}", what, std::string_view(text, static_cast<size_t>(length)));
}

// Data movement is typed by bytes for dtypes MPI has no type for (bf16, f16).
struct MpiType {
  MPI_Datatype type;
  int64_t scale;  // MPI elements per IR element
};

MpiType moving_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return {MPI_FLOAT, 1};
    case DType::f64: return {MPI_DOUBLE, 1};
    case DType::i32: return {MPI_INT32_T, 1};
    case DType::i64: return {MPI_INT64_T, 1};
    case DType::c64: return {MPI_C_FLOAT_COMPLEX, 1};
    default: return {MPI_BYTE, dtype_size(dtype)};
  }
}

Expected<MPI_Datatype> reducing_type(DType dtype) {
  MpiType t = moving_type(dtype);
  if (t.type == MPI_BYTE) {
    return make_error("MPI sum of {} is not supported (reduce in f32 instead)", dtype_name(dtype));
  }
  return t.type;
}

Expected<int> mpi_count(int64_t count, DType dtype, std::string_view what) {
  int64_t scaled = count * moving_type(dtype).scale;
  if (count < 0 || scaled > INT_MAX) {
    return make_error("MPI {}: {} elements of {} do not fit an MPI count", what, count, dtype_name(dtype));
  }
  return static_cast<int>(scaled);
}

// A collective call, recorded as this rank's operation (fault_injection.h);
// an injected failure is returned instead of calling MPI.
template <typename Call>
Status collective(std::string_view what, Call&& call) {
  OperationPhase phase(JobPhase::kCollective);
  if (!phase.fault()) return make_error_like(phase.fault().error(), "{}: {}", what, phase.fault().error().message);
  return check(call(), what);
}

}  // namespace

Expected<MpiSession> MpiSession::init(int* argc, char*** argv) {
  keep_freed_memory();  // every rank, before its first tensor
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return MpiSession(/*owns=*/false);
  int provided = 0;
  if (Status s = check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "init"); !s) {
    return s.error();
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return MpiSession(/*owns=*/true);
}

MpiSession::~MpiSession() {
  if (owns_) MPI_Finalize();
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator Communicator::world() { return Communicator(MPI_COMM_WORLD); }

Expected<Communicator> Communicator::split(int color, int key) const {
  MPI_Comm sub = MPI_COMM_NULL;
  if (Status s = collective("comm_split", [&] { return MPI_Comm_split(comm_, color, key, &sub); }); !s) return s.error();
  MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
  return Communicator(sub);
}

Status Communicator::barrier() const { return collective("barrier", [&] { return MPI_Barrier(comm_); }); }

Status Communicator::all_reduce_sum(void* buffer, int64_t count, DType dtype) const {
  Expected<MPI_Datatype> type = reducing_type(dtype);
  if (!type) return type.error();
  Expected<int> n = mpi_count(count, dtype, "all_reduce");
  if (!n) return n.error();
  return collective("all_reduce", [&] { return MPI_Allreduce(MPI_IN_PLACE, buffer, *n, *type, MPI_SUM, comm_); });
}

Status Communicator::all_gather(const void* send, void* recv, int64_t count_per_rank, DType dtype) const {
  Expected<int> n = mpi_count(count_per_rank, dtype, "all_gather");
  if (!n) return n.error();
  MPI_Datatype type = moving_type(dtype).type;
  return collective("all_gather", [&] { return MPI_Allgather(send, *n, type, recv, *n, type, comm_); });
}

Status Communicator::reduce_scatter_sum(const void* send, void* recv, int64_t count_per_rank,
                                        DType dtype) const {
  Expected<MPI_Datatype> type = reducing_type(dtype);
  if (!type) return type.error();
  Expected<int> n = mpi_count(count_per_rank, dtype, "reduce_scatter");
  if (!n) return n.error();
  return collective("reduce_scatter", [&] { return MPI_Reduce_scatter_block(send, recv, *n, *type, MPI_SUM, comm_); });
}

Status Communicator::all_to_all(const void* send, void* recv, int64_t count_per_rank, DType dtype) const {
  Expected<int> n = mpi_count(count_per_rank, dtype, "all_to_all");
  if (!n) return n.error();
  MPI_Datatype type = moving_type(dtype).type;
  return collective("all_to_all", [&] { return MPI_Alltoall(send, *n, type, recv, *n, type, comm_); });
}

Status Communicator::broadcast(void* buffer, int64_t count, DType dtype, int root) const {
  Expected<int> n = mpi_count(count, dtype, "broadcast");
  if (!n) return n.error();
  return collective("broadcast", [&] { return MPI_Bcast(buffer, *n, moving_type(dtype).type, root, comm_); });
}

Expected<double> Communicator::max_over_ranks(double value) const {
  double result = 0;
  if (Status s = collective("max", [&] { return MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_); }); !s) {
    return s.error();
  }
  return result;
}

Expected<double> Communicator::sum_over_ranks(double value) const {
  double result = 0;
  if (Status s = collective("sum", [&] { return MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_SUM, comm_); }); !s) {
    return s.error();
  }
  return result;
}

void Communicator::abort(std::string_view message, int code) const {
  // A sub-communicator's rank is not the one mpirun names: say both.
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != size_ || world_rank != rank_) {
    fmt::print(stderr, "autopar: rank {} of {} (rank {} of {} in its group): {}\n", world_rank, world_size, rank_,
               size_, message);
  } else {
    fmt::print(stderr, "autopar: rank {} of {}: {}\n", rank_, size_, message);
  }
  std::fflush(stderr);
  MPI_Abort(comm_, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

}  // namespace autopar
