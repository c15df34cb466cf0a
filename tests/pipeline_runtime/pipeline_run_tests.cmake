# `autopar pipeline` jobs under mpirun (pipeline_run_test.sh), every one checked
# against the single-process full-batch run, and every rank's peak memory
# against the memory model (pipeline_memory.h, 5%). Small models keep the set short
# on 2 cores: the mlp (2 hidden layers, or 6 for 8 stages) and llama3-debugmodel
# with one layer per stage at batch 4, seq 16.
set(MLP --model mlp --steps 2 --check)
set(LLAMA --model llama3-debugmodel --batch 4 --seq 16 --steps 2 --check)

# pipeline_run(NAME EXPECT NP PATTERN TIMEOUT args...)
function(pipeline_run name expect np pattern timeout)
  add_test(NAME pipeline_run_${name}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/pipeline_run_test.sh $<TARGET_FILE:autopar-full>
            ${expect} ${np} ${pattern} ${ARGN})
  autopar_timeout(test_timeout ${timeout})
  set_tests_properties(pipeline_run_${name} PROPERTIES TIMEOUT ${test_timeout} PROCESSORS 2)
endfunction()

# Every schedule on 2 and 4 ranks, 1 stage per rank (mlp) ...
foreach(schedule gpipe 1f1b zb-h1 interleaved-1f1b)
  pipeline_run(mlp_2_${schedule} ok 2 check 120 ${MLP} --schedule ${schedule} --microbatches 4)
  pipeline_run(llama_4_${schedule} ok 4 check 180 ${LLAMA} --layers 2 --schedule ${schedule}
               --microbatches 4)
endforeach()
# ... and 2 stages per rank (interleaved; the other schedules take one stage per rank).
pipeline_run(mlp_4_interleaved_v2 ok 4 check 180 ${MLP} --layers 6 --schedule interleaved-1f1b
             --stages-per-rank 2 --microbatches 4)
pipeline_run(llama_2_interleaved_v2 ok 2 check 180 ${LLAMA} --layers 2 --schedule interleaved-1f1b
             --stages-per-rank 2 --microbatches 4)

# Whole layers recomputed in each stage's backward (--recompute full;
# stage_recompute.h): the check and the memory model hold with the re-runs,
# with B (1F1B) and with I and W apart (zb-h1).
pipeline_run(llama_2_1f1b_recompute_full ok 2 "whole layers recomputed \\(128 nodes re-run in 2 stages\\)" 180
             ${LLAMA} --layers 2 --schedule 1f1b --microbatches 4 --recompute full)
pipeline_run(llama_2_zb-h1_recompute_full ok 2 "whole layers recomputed" 180 ${LLAMA} --layers 2
             --schedule zb-h1 --microbatches 4 --recompute full)

# AdamW: its state (two f32 moments per param element) is held from before
# step 1, and the parameters after each step are checked.
pipeline_run(mlp_2_1f1b_adamw ok 2 check 120 ${MLP} --schedule 1f1b --microbatches 4
             --optimizer adamw)
pipeline_run(llama_4_zb-h1_adamw ok 4 check 180 ${LLAMA} --layers 2 --schedule zb-h1
             --microbatches 4 --optimizer adamw)

# Given shapes: a wrong one is reported on every rank naming the stage and value;
# ranks that disagree on inference all refuse instead of hanging.
pipeline_run(wrong_stage_shape refuse 2 "stage 1 input 1: shape \\[16, 128\\] given, \\[16, 256\\] inferred"
             60 --model mlp --schedule 1f1b --microbatches 2
             --stage-shapes ${CMAKE_CURRENT_SOURCE_DIR}/shapes_wrong_mlp.json)
pipeline_run(imported_graph_refused refuse 2 "--graph: autopar pipeline runs the built-in models only"
             60 --graph ${CMAKE_SOURCE_DIR}/tests/runtime/graphs/dropout_mlp.json --schedule 1f1b
             --microbatches 2)
pipeline_run(ranks_disagree disagree 2 ${CMAKE_CURRENT_SOURCE_DIR}/shapes_wrong_mlp.json 60
             --model mlp --schedule 1f1b --microbatches 2)
pipeline_run(given_stage_shapes ok 2 check 120 ${MLP} --schedule 1f1b --microbatches 2
             --stage-shapes ${CMAKE_CURRENT_SOURCE_DIR}/shapes_right_mlp.json)

# Faults at phases (--inject-fault; issue #18, the whole set in bench/fault_sweep.sh):
# the job ends within 10 s of the fault, naming the rank and the phase.
set(FAULT_JOB --model mlp --schedule 1f1b --microbatches 4 --steps 2)
pipeline_run(phase_fail_shape_inference phase 2
             "rank 1 of 2: shape inference: injected failure in phase shape-inference " 60
             ${FAULT_JOB} --inject-fault fail:shape-inference:1)
pipeline_run(phase_kill_send phase 2 "rank 0 of 2: killed by SIGKILL in phase send " 60
             ${FAULT_JOB} --inject-fault kill:send:0)
pipeline_run(phase_fail_optimizer_step phase 2 "rank 1 of 2: injected failure in phase optimizer-step " 60
             ${FAULT_JOB} --inject-fault fail:optimizer-step:1)

# The must-show launch of issue 6: 8 stages of the 6-layer debugmodel (cost cut).
pipeline_run(must_show_llama_4_interleaved_v2 ok 4 check 300 --model llama3-debugmodel
             --schedule interleaved-1f1b --stages-per-rank 2 --microbatches 8 --steps 2 --check)
