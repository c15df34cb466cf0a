// Stage setup: what every rank of a pipeline job agrees on before the first
// microbatch runs: the schedule (lowered with SEND/RECV), the stages and their
// backward partition, and each held stage's boundary metadata.
//
// Metadata comes from run-time shape inference (pipeline/stage_meta.h) unless
// the user gave --stage-shapes. First each rank contributes one flag (were
// shapes given?) to an all-gather and calls decide_inference: a mix is the same
// error on every rank. Inferring, a rank runs infer_stage for its stages in
// stage order; the input metas of a stage come from the previous stage as a
// small JSON message (MPI, never tensor data) when that stage is on another
// rank, or as the return value of its own infer_stage call when on this rank.
// There is no barrier after inference: a rank goes on as soon as its own
// stages are done. A rank whose inference fails ends the job (MPI_Abort), so
// nobody waits for its message. Given shapes are checked against inference on
// every rank for every stage (a pure local computation), and the verdict is
// combined across ranks, so a wrong shape is reported on every rank.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <optional>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/schedule.h"
#include "pipeline/stage_meta.h"
#include "pipeline_runtime/partition.h"
#include "runtime/mpi_comm.h"

namespace autopar::pipeline {

struct PipelineSetupOptions {
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int32_t microbatches = 1;
  int32_t stages_per_rank = 1;
  // nullopt: by layer count when the layers divide evenly enough, else by cost.
  std::optional<StageBalance> balance;
  const HardwareProfile* hardware = nullptr;  // for cost balance
  // This rank's --stage-shapes, parsed; nullopt when not given.
  std::optional<std::vector<GivenStageShapes>> stage_shapes;
  // A plan's cut (the units of every stage); empty: cut by `balance`.
  std::vector<std::vector<std::string>> stage_units;
  // Whole-layer recomputation in every stage (stage_recompute.h).
  bool recompute_layers = false;
  // Sharded boundaries (3-D runs): how this rank holds output `output` of
  // node `node`. Senders put it in each metadata message; receivers check it
  // against their own (the agreement rule), naming the value when they differ.
  std::function<BoundaryLayout(NodeId node, int32_t output)> boundary_layout;
};

struct PipelineSetup {
  Schedule lowered;                   // this job's schedule with SEND/RECV
  std::vector<Stage> stages;          // all stages (every rank cuts the same)
  std::vector<StageProgram> programs; // all stages' programs
  std::map<StageIdx, StageMeta> metas;  // this rank's stages only
  bool inferred = true;               // false: given shapes were used
  double inference_s = 0;             // agreement + inference (or check) on this rank
  int32_t meta_messages_sent = 0, direct_hand_offs = 0;
};

// `micro` is the model built at microbatch size, `full` at the full batch (its
// input placeholders give the user's real input metas; `full` may be `micro`
// itself for a graph that is one microbatch). `world` holds one rank
// per pipeline position, in rank order (a 3-D run passes the ranks with this
// rank's coordinate in the stage group); every message goes on it. Returned errors are the
// same on every rank (refusals: bad options, disagreement, wrong given shapes);
// an inference failure on one rank aborts the job from inside.
Expected<PipelineSetup> setup_pipeline(const Graph& full, const Graph& micro,
                                       const Communicator& world,
                                       const PipelineSetupOptions& options);

// Point-to-point messages of the stage runtime on `comm`.
Status send_bytes_blocking(const Communicator& comm, const void* data, int64_t bytes, int to, int tag);
Status recv_bytes_exact(const Communicator& comm, void* data, int64_t bytes, int from, int tag);

}  // namespace autopar::pipeline
