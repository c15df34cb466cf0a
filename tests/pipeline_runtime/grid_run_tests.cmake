# 3-D runs (`autopar run --pipeline N`, pipeline_runtime/grid_run.h) under
# mpirun (grid_run_test.sh): pipeline stages along mesh dim 0, each stage group
# sharded by one plan on the rest, every rank's block of every gradient and
# parameter checked against the single-process run. llama3-debugmodel at batch
# 8, seq 32 (4 microbatches of 2): the stage groups' solve shards it.
set(GRID_LLAMA --model llama3-debugmodel --steps 2 --check)

# grid_run(NAME EXPECT NP PATTERN TIMEOUT args...)
function(grid_run name expect np pattern timeout)
  add_test(NAME grid_run_${name}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/grid_run_test.sh $<TARGET_FILE:autopar-full>
            ${expect} ${np} ${pattern} ${ARGN})
  autopar_timeout(test_timeout ${timeout})
  set_tests_properties(grid_run_${name} PROPERTIES TIMEOUT ${test_timeout} PROCESSORS 2 SKIP_RETURN_CODE 77)
endfunction()

# Issue 16's launches: pipeline over d0, SPMD over d1 (and d1 x d2).
grid_run(llama_2x2_1f1b ok 4 check 240 ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --schedule 1f1b --microbatches 4)
grid_run(llama_2x2x2_1f1b ok 8 check 300 ${GRID_LLAMA} --mesh 2x2x2 --pipeline 2 --schedule 1f1b
         --microbatches 4)
# Every other schedule on 4 ranks (interleaved with 2 stages per rank).
grid_run(llama_2x2_gpipe ok 4 check 240 ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --schedule gpipe --microbatches 4)
grid_run(llama_2x2_zb-h1 ok 4 check 240 ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --schedule zb-h1 --microbatches 4)
grid_run(llama_2x2_interleaved_v2 ok 4 check 240 ${GRID_LLAMA} --mesh 2x2 --pipeline 2
         --schedule interleaved-1f1b --stages-per-rank 2 --microbatches 4)
# Whole layers recomputed in each stage group's backward, re-runs redistributed
# as the plan says; from flags and from a plan file that records it.
grid_run(llama_2x2_1f1b_recompute_full ok 4 "whole layers recomputed" 240 ${GRID_LLAMA} --mesh 2x2 --pipeline 2
         --schedule 1f1b --microbatches 4 --recompute full)
grid_run(llama_2x2_recompute_full_from_plan_file ok 4 "whole layers recomputed" 240 --model llama3-debugmodel
         --steps 2 --check
         --plan @PLAN:--model,llama3-debugmodel,--mesh,2x2,--pipeline,2,--microbatches,4,--hardware,cpu,--recompute,full@)
grid_run(recompute_auto_refused refuse 4 "--recompute auto (--recompute full works) does not work with a pipeline"
         60 ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --microbatches 4 --recompute auto)
# A plan written by `autopar plan --pipeline 2 --format json`, run with --plan.
grid_run(llama_2x2_from_plan_file ok 4 check 240 --model llama3-debugmodel --steps 2 --check
         --plan @PLAN:--model,llama3-debugmodel,--mesh,2x2,--pipeline,2,--microbatches,4,--hardware,cpu@)
# An imported PyTorch model (one microbatch per export; the reference runs it
# on each microbatch), its stage groups laid out FSDP-style.
grid_run(imported_transformer_lm_2x2_fsdp ok 4 check 240 --graph @EXPORT:transformer_lm@ --steps 2 --check
         --mesh 2x2 --pipeline 2 --microbatches 2 --baseline fsdp)

# Bad combinations: refused on every rank before anything runs.
grid_run(degree_not_dividing_dim0 refuse 4 "--pipeline 3 does not divide mesh dim 0 (4)" 60
         ${GRID_LLAMA} --mesh 4 --pipeline 3)
grid_run(too_few_microbatches refuse 4 "schedule 1f1b needs at least as many microbatches as pipeline ranks" 60
         ${GRID_LLAMA} --mesh 4 --pipeline 4 --microbatches 2)
grid_run(stage_does_not_fit refuse 4 "pipeline rank 0 (stages 0) needs .* MiB per device" 60
         ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --microbatches 4 --memory-gb 0.03)
grid_run(no_sharding_fits refuse 4 "no sharding of the stage groups on 2 fits: memory budget cannot be met" 60
         ${GRID_LLAMA} --mesh 2x2 --pipeline 2 --microbatches 4 --memory-gb 0.001)
