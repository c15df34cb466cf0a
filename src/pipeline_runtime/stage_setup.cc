// Stage setup: agreement, shape inference over MPI, given-shape checks.
#include "pipeline_runtime/stage_setup.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <mpi.h>

#include "pipeline/lower.h"
#include "pipeline_runtime/stage_recompute.h"
#include "runtime/fault_injection.h"

namespace autopar::pipeline {
namespace {

// Meta messages use tags below any tensor tag of the runtime.
constexpr int kMetaTag = 1;

Status mpi_status(int code, const char* what) {
  if (code == MPI_SUCCESS) return ok_status();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return make_error_of(ErrorKind::kRuntime, "MPI {} failed: {}", what, std::string(text, static_cast<size_t>(length)));
}

std::map<std::string, TensorMeta> input_metas(const Graph& full) {
  std::map<std::string, TensorMeta> inputs;
  for (const Node& n : full.nodes()) {
    if (n.is_placeholder() && n.kind == PlaceholderKind::kInput) inputs.emplace(n.name, n.meta());
  }
  return inputs;
}

Expected<std::string> recv_string(const Communicator& comm, int from) {
  OperationPhase phase(JobPhase::kReceive);
  MPI_Status status;
  if (Status s = mpi_status(MPI_Probe(from, kMetaTag, comm.native(), &status), "probe"); !s) {
    return s.error();
  }
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  if (Status s = mpi_status(MPI_Recv(text.data(), count, MPI_CHAR, from, kMetaTag, comm.native(),
                                     MPI_STATUS_IGNORE),
                            "recv of stage metadata");
      !s) {
    return s.error();
  }
  return text;
}

// The agreement rule on sharded boundaries: the sender's layout of every
// value must be the one this rank's plan expects.
Status check_layouts(const Graph& micro, const Stage& sender, const MetaMessage& message,
                     const PipelineSetupOptions& o) {
  if (!o.boundary_layout) return ok_status();
  if (message.layouts.size() != sender.outputs.size()) {
    return make_error("stage {}: stage {} sent {} placements for its {} outputs (is every rank running the same "
                      "plan?)", message.to, message.from, message.layouts.size(), sender.outputs.size());
  }
  for (size_t k = 0; k < sender.outputs.size(); ++k) {
    const Value& v = sender.outputs[k];
    BoundaryLayout want = o.boundary_layout(v.node, v.output);
    const BoundaryLayout& got = message.layouts[k];
    if (got == want) continue;
    return make_error("stage {}: stage {} holds {} as {} (local shape {}), but this rank's plan reads it as {} "
                      "(local shape {}); give every rank the same plan",
                      message.to, message.from, micro.node(v.node).name, got.placement,
                      shape_to_string(got.local_shape), want.placement, shape_to_string(want.local_shape));
  }
  return ok_status();
}

// This rank's stages, in stage order: input metas from graph inputs, from the
// previous stage (message or return value), then infer_stage.
Expected<std::map<StageIdx, StageMeta>> infer_own_stages(
    const Graph& micro, const PipelineSetup& setup, const Communicator& world,
    const std::map<std::string, TensorMeta>& micro_inputs, const PipelineSetupOptions& o,
    PipelineSetup& counts) {
  const int rank = world.rank();
  std::map<StageIdx, StageMeta> metas;
  const std::vector<RankIdx>& owner = setup.lowered.stage_to_rank;
  for (const Stage& st : setup.stages) {
    if (owner[static_cast<size_t>(st.index)] != rank) continue;
    const StageProgram& program = setup.programs[static_cast<size_t>(st.index)];
    std::vector<TensorMeta> from_previous;
    if (!program.activations_in.empty()) {
      StageIdx prev = st.index - 1;
      if (owner[static_cast<size_t>(prev)] == rank) {
        from_previous = metas.at(prev).outputs;  // the return value, no message
        ++counts.direct_hand_offs;
      } else {
        Expected<std::string> text = recv_string(world, owner[static_cast<size_t>(prev)]);
        if (!text) return text.error();
        Expected<MetaMessage> message = decode_metas(*text);
        if (!message) return make_error_like(message.error(), "stage {}: metadata from stage {}: {}", st.index, prev,
                                        message.error().message);
        if (Status agreed = check_layouts(micro, setup.stages[static_cast<size_t>(prev)], *message, o); !agreed) {
          return agreed.error();
        }
        from_previous = std::move(message->metas);
      }
    }
    // Stage inputs: placeholders by name, activations in the previous stage's
    // output order (both lists are sorted by node id).
    const Stage& prev_stage = setup.stages[static_cast<size_t>(std::max(st.index - 1, 0))];
    std::vector<TensorMeta> in;
    for (const Value& v : st.inputs) {
      const Node& n = micro.node(v.node);
      if (n.is_placeholder()) {
        auto it = micro_inputs.find(n.name);
        if (it == micro_inputs.end()) return make_error("stage {}: no meta for input {}", st.index, n.name);
        in.push_back(it->second);
        continue;
      }
      auto pos = std::find(prev_stage.outputs.begin(), prev_stage.outputs.end(), v);
      size_t k = static_cast<size_t>(pos - prev_stage.outputs.begin());
      if (pos == prev_stage.outputs.end() || k >= from_previous.size()) {
        return make_error("stage {}: input {} is not among stage {}'s {} output metas", st.index,
                          n.name, st.index - 1, from_previous.size());
      }
      in.push_back(from_previous[k]);
    }
    Expected<StageMeta> meta = infer_stage(micro, st, in);
    if (!meta) return meta.error();
    StageIdx next = st.index + 1;
    if (next < static_cast<StageIdx>(setup.stages.size()) && owner[static_cast<size_t>(next)] != rank) {
      MetaMessage message{st.index, next, meta->outputs, {}};
      if (o.boundary_layout) {
        for (const Value& v : st.outputs) message.layouts.push_back(o.boundary_layout(v.node, v.output));
      }
      std::string text = encode_metas(message);
      if (Status s = send_bytes_blocking(world, text.data(), static_cast<int64_t>(text.size()),
                                         owner[static_cast<size_t>(next)], kMetaTag);
          !s) {
        return s.error();
      }
      ++counts.meta_messages_sent;
    }
    metas.emplace(st.index, std::move(*meta));
  }
  return metas;
}

// Given shapes: every rank checks every stage against a local inference, then
// the ranks combine their verdicts (a rank reading a different file cannot
// proceed alone and wait forever).
Expected<std::map<StageIdx, StageMeta>> check_given(
    const Graph& micro, const PipelineSetup& setup, const Communicator& world,
    const std::map<std::string, TensorMeta>& micro_inputs,
    const std::vector<GivenStageShapes>& given) {
  Expected<PipelineMeta> all =
      infer_pipeline(micro, setup.stages, setup.lowered.stage_to_rank, micro_inputs);
  Status verdict = all ? check_stage_shapes(all->stages, given) : Status(all.error());
  int32_t failed = verdict ? 0 : 1;
  if (Status s = world.all_reduce_sum(&failed, 1, DType::i32); !s) return s.error();
  if (!verdict) return make_error_like(verdict.error(), "--stage-shapes: {}", verdict.error().message);
  if (failed > 0) {
    return make_error("--stage-shapes were rejected on {} other rank(s) (different files?)", failed);
  }
  std::map<StageIdx, StageMeta> metas;
  for (const StageMeta& m : all->stages) {
    if (setup.lowered.stage_to_rank[static_cast<size_t>(m.stage)] == world.rank()) metas.emplace(m.stage, m);
  }
  return metas;
}

Expected<PipelineSetup> build_plan(const Graph& micro, const Communicator& world,
                                   const PipelineSetupOptions& o) {
  PipelineSetup setup;
  Expected<Schedule> schedule =
      make_schedule({o.schedule, world.size(), o.microbatches, o.stages_per_rank});
  if (!schedule) return schedule.error();
  setup.lowered = lower_communication(*schedule);
  StageOptions cut{schedule->num_stages, world.size(), o.balance.value_or(StageBalance::kCount),
                   o.hardware, o.stage_units};
  if (!o.stage_units.empty()) cut.balance = StageBalance::kGiven;
  Expected<std::vector<Stage>> stages = split_stages(micro, cut);
  if (!stages && !o.balance.has_value() && o.hardware != nullptr && o.stage_units.empty()) {
    cut.balance = StageBalance::kCost;  // e.g. 8 stages of a 6-layer model
    stages = split_stages(micro, cut);
  }
  if (!stages) return stages.error();
  setup.stages = std::move(*stages);
  Expected<std::vector<StageProgram>> programs = partition_stages(micro, setup.stages);
  if (!programs) return programs.error();
  setup.programs = std::move(*programs);
  if (o.recompute_layers) add_layer_recomputation(micro, setup.programs);
  return setup;
}

}  // namespace

Status send_bytes_blocking(const Communicator& comm, const void* data, int64_t bytes, int to, int tag) {
  OperationPhase phase(JobPhase::kSend);
  if (!phase.fault()) return make_error_like(phase.fault().error(), "send to rank {}: {}", to, phase.fault().error().message);
  return mpi_status(MPI_Send(data, static_cast<int>(bytes), MPI_BYTE, to, tag, comm.native()), "send");
}

Status recv_bytes_exact(const Communicator& comm, void* data, int64_t bytes, int from, int tag) {
  OperationPhase phase(JobPhase::kReceive);
  MPI_Status status;
  if (Status s = mpi_status(
          MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, from, tag, comm.native(), &status),
          "recv");
      !s) {
    return s;
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (count != bytes) {
    return make_error_of(ErrorKind::kRuntime, "received {} bytes from rank {} (tag {}), expected {}", count, from, tag, bytes);
  }
  return ok_status();
}

Expected<PipelineSetup> setup_pipeline(const Graph& full, const Graph& micro,
                                       const Communicator& world, const PipelineSetupOptions& o) {
  Expected<PipelineSetup> setup = build_plan(micro, world, o);
  if (!setup) return setup.error();
  // An imported graph is one microbatch already: its inputs are the microbatch's.
  Expected<std::map<std::string, TensorMeta>> micro_inputs =
      &full == &micro ? input_metas(micro) : microbatch_metas(input_metas(full), o.microbatches);
  if (!micro_inputs) return micro_inputs.error();
  auto start = std::chrono::steady_clock::now();
  int32_t given = o.stage_shapes.has_value() ? 1 : 0;
  std::vector<int32_t> flags(static_cast<size_t>(world.size()));
  if (Status s = world.all_gather(&given, flags.data(), 1, DType::i32); !s) return s.error();
  // std::vector<bool> is not contiguous bools, hence the array.
  std::unique_ptr<bool[]> has_shapes(new bool[flags.size()]);
  for (size_t i = 0; i < flags.size(); ++i) has_shapes[i] = flags[i] != 0;
  Expected<bool> infer = decide_inference({has_shapes.get(), flags.size()});
  if (!infer) return infer.error();
  setup->inferred = *infer;
  // Not a refusal: the other ranks are waiting for this rank's metadata.
  if (Status s = enter_phase(JobPhase::kShapeInference); !s) {
    world.abort(make_error_like(s.error(), "shape inference: {}", s.error().message));
  }
  if (*infer) {
    Expected<std::map<StageIdx, StageMeta>> metas =
        infer_own_stages(micro, *setup, world, *micro_inputs, o, *setup);
    if (!metas) world.abort(make_error_like(metas.error(), "shape inference: {}", metas.error().message));
    setup->metas = std::move(*metas);
  } else {
    Expected<std::map<StageIdx, StageMeta>> metas =
        check_given(micro, *setup, world, *micro_inputs, *o.stage_shapes);
    if (!metas) return metas.error();
    setup->metas = std::move(*metas);
  }
  setup->inference_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (Status s = enter_phase(JobPhase::kStartup); !s) return s.error();  // until step 1
  return setup;
}

}  // namespace autopar::pipeline
