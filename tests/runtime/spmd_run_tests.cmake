# `autopar run` jobs under mpirun (spmd_run_test.sh): every plan is checked
# against the unsplit model, and the measured bytes against the plan's.
# Tiny models (mlp; a one-layer llama3-debugmodel with batch 2, seq 16) keep
# the set within minutes on 2 cores; a small memory budget makes the solver
# shard the mlp rather than replicate it. Every rank plans itself: the solver's
# work limits, not a wall-clock limit, stop it, so the ranks agree however
# slowly a busy machine runs them.
set(MLP --model mlp --steps 2 --check)
set(LLAMA --model llama3-debugmodel --layers 1 --batch 2 --seq 16 --steps 2 --check)

# Solved plans and every baseline the mesh allows.
spmd_run(mlp_2_solved ok 2 check 120 ${MLP} --mesh 2 --memory-gb 0.0009)
spmd_run(mlp_2_ddp ok 2 check 120 ${MLP} --mesh 2 --baseline ddp)
spmd_run(mlp_2_fsdp ok 2 check 120 ${MLP} --mesh 2 --baseline fsdp --optimizer sgd)
spmd_run(mlp_2_tp ok 2 check 120 ${MLP} --mesh 2 --baseline tp)
spmd_run(mlp_4_solved ok 4 check 120 ${MLP} --mesh 4 --memory-gb 0.0004)
spmd_run(mlp_4_tp_sp ok 4 check 120 ${MLP} --mesh 4 --baseline tp-sp)
spmd_run(mlp_2x2_solved ok 4 check 120 ${MLP} --mesh 2x2 --memory-gb 0.0004)
spmd_run(mlp_2x2_fsdp_tp ok 4 check 120 ${MLP} --mesh 2x2 --baseline fsdp-tp)
spmd_run(mlp_2x4_solved ok 8 check 180 ${MLP} --mesh 2x4 --memory-gb 0.0003)
spmd_run(mlp_2x4_tp ok 8 check 180 ${MLP} --mesh 2x4 --baseline tp)
spmd_run(llama_2_solved ok 2 check 180 ${LLAMA} --mesh 2)
spmd_run(llama_4_fsdp ok 4 check 180 ${LLAMA} --mesh 4 --baseline fsdp)
spmd_run(llama_2x2_solved ok 4 check 180 ${LLAMA} --mesh 2x2)
spmd_run(llama_2x2_ddp ok 4 check 180 ${LLAMA} --mesh 2x2 --baseline ddp)
spmd_run(llama_2x2_fsdp ok 4 check 180 ${LLAMA} --mesh 2x2 --baseline fsdp)
spmd_run(llama_2x2_tp ok 4 check 180 ${LLAMA} --mesh 2x2 --baseline tp)
spmd_run(llama_2x2_tp_sp ok 4 check 180 ${LLAMA} --mesh 2x2 --baseline tp-sp)
spmd_run(llama_2x2_fsdp_tp ok 4 check 180 ${LLAMA} --mesh 2x2 --baseline fsdp-tp)
spmd_run(llama_2x4_fsdp_tp ok 8 check 240 ${LLAMA} --mesh 2x4 --baseline fsdp-tp)

# Uneven shards (docs/sharding.md): on 3 ranks seq 16, dim 256 and vocab 2048
# split 6/6/4, 86/86/84 and 683/683/682; the solver's plan holds dozens of
# nodes so, and the check (values, every rank's memory against its own
# prediction, comm bytes) must pass. 2x3 puts them beside an even mesh dim.
set(UNEVEN "run: .*, [0-9]+ nodes on uneven shards")
spmd_run(llama_3_uneven ok 3 ${UNEVEN} 180 ${LLAMA} --mesh 3)
spmd_run(llama_2x3_uneven ok 6 ${UNEVEN} 240 ${LLAMA} --mesh 2x3)
# AdamW's first update is lr * g / (|g| + eps): rounding noise in a near-zero
# gradient moves its parameter by up to lr. The check adopts the ranks'
# parameters after each step (spmd_run.cc), so step 2's gradients are compared
# from the same inputs; before it did, this case broke on tok_embeddings.
spmd_run(llama_3_fsdp_uneven ok 3 ${UNEVEN} 180 ${LLAMA} --mesh 3 --baseline fsdp)

# An imported-style graph with generic aten ops (triu, run through libtorch's
# dispatcher), a constant, and two buffers the step updates (one of them from a
# batch mean, Partial under a batch shard): the check compares each update.
set(GENERIC --graph ${CMAKE_CURRENT_SOURCE_DIR}/graphs/generic_buffers.json --steps 3 --check)
spmd_run(generic_buffers_2x2_solved ok 4 check 120 ${GENERIC} --mesh 2x2)
spmd_run(generic_buffers_2x2_ddp ok 4 check 120 ${GENERIC} --mesh 2x2 --baseline ddp)
spmd_run(generic_buffers_4_fsdp ok 4 check 120 ${GENERIC} --mesh 4 --baseline fsdp)

# Dropout (bernoulli.p) draws the same mask whatever the sharding: the check
# against the single process passes with the mask column-sharded on both mesh
# dims (the solver's choice at this budget) and batch x column sharded (pinned).
set(DROPOUT --graph ${CMAKE_CURRENT_SOURCE_DIR}/graphs/dropout_mlp.json --steps 3 --check)
spmd_run(dropout_2x2_solved ok 4 check 120 ${DROPOUT} --mesh 2x2 --memory-gb 0.00001)
spmd_run(dropout_2x2_batch_by_column ok 4 check 120 ${DROPOUT} --mesh 2x2 --baseline ddp
         --pin "bernoulli=S(0)S(1)")
# Recomputed, the mask is drawn again before the backward: the same one (the
# generator is keyed by node), or the check fails.
spmd_run(dropout_2x2_recompute_full ok 4 "run: .*, 1 whole layers recomputed" 120 ${DROPOUT}
         --mesh 2x2 --recompute full)
# A re-run gathers its sharded operand again right before the backward node
# that reads it (x S(0), mm replicated), beside sq, which the forward did not
# hold: the peak is that re-run's gather (2.032 MiB; 1.516 MiB keeping mm),
# which the memory model counts as a phase of its own (step_memory.h): the
# measured peak equals the prediction. Without recomputation too: add and
# tail, which nothing reads, go right after they run (as the model has it),
# not at the next step.
spmd_run(rerun_gather_2_recompute_full ok 2 "plan predicts .* \\(\\+0\\.00%\\)" 120
         --graph ${CMAKE_CURRENT_SOURCE_DIR}/graphs/rerun_gather.json --steps 2 --check --mesh 2
         --pin "x=S(0)" --pin "mm=R" --pin "sq=S(0)" --recompute full)
spmd_run(rerun_gather_2_unread_values_go ok 2 "plan predicts .* \\(\\+0\\.00%\\)" 120
         --graph ${CMAKE_CURRENT_SOURCE_DIR}/graphs/rerun_gather.json --steps 2 --check --mesh 2
         --pin "x=S(0)" --pin "mm=R" --pin "sq=S(0)")

# --check-nodes: every node output and redistributed input of a sharded llama
# matches; a wrong value planted on one rank (hidden --corrupt-at-node) is
# named as the first node that differs, with its strategy.
spmd_run(check_nodes_llama_2x2 ok 4 "node check: all [0-9]+ node outputs and redistributed inputs match"
         180 ${LLAMA} --mesh 2x2 --baseline fsdp-tp --check-nodes)
spmd_run(check_nodes_names_the_wrong_node fail 4
         "^  relu_1 \\(aten.relu.default\\) output 0: max abs error 1 on rank 1, "
         60 --model mlp --mesh 2x2 --baseline ddp --check-nodes --corrupt-at-node relu_1 --fail-rank 1)

# --check compares every rank's block: output.bias's gradient is computed
# replicated (no reduction follows) under this plan; a wrong value on rank 1
# only, where rank 0's copy is right, is caught (the check used to compare
# rank 0's copy alone, and rank 1 went on training with it).
spmd_run(check_every_replica fail 4 "^check: .*MISMATCH in gradient of output.bias \\(rank 1\\)"
         60 --model mlp --mesh 2x2 --baseline ddp --check --corrupt-at-node view --fail-rank 1)

# Faults: a rank that fails ends the job naming the rank and the op; a rank
# that dies (SIGKILL, saying where first) makes mpirun end the job.
spmd_run(fault_rank_fails fail 4 "rank 2 of 4: node relu_1 \\(aten.relu.default\\): injected failure"
         60 --model mlp --mesh 2x2 --baseline ddp --fail-at-node relu_1 --fail-rank 2)
spmd_run(fault_rank_killed killed 4 "rank 3 of 4: killed by SIGKILL at node relu_1" 60 --model mlp --mesh 2x2 --baseline ddp
         --kill-at-node relu_1 --fail-rank 3)

# Faults at phases (--inject-fault; issue #18, the whole set in bench/fault_sweep.sh):
# the job ends within 10 s of the fault, naming the rank and the phase. A killed
# rank says so before it dies; mpirun names it too, and the survivors report
# their own phase on the SIGTERM mpirun sends them.
set(FAULT_JOB --model mlp --mesh 2x2 --baseline ddp --steps 2)
spmd_run(phase_fail_first_forward phase 4 "rank 2 of 4: injected failure in phase first-forward " 60
         ${FAULT_JOB} --inject-fault fail:first-forward:2)
spmd_run(phase_kill_collective phase 4 "rank 3 of 4: killed by SIGKILL in phase collective " 60
         ${FAULT_JOB} --inject-fault kill:collective:3)
spmd_run(phase_kill_shape_inference_pipeline phase 4
         "rank 3 of 4: killed by SIGKILL in phase shape-inference " 60
         --model mlp --mesh 2x2 --pipeline 2 --steps 2 --inject-fault kill:shape-inference:3)
# A plain run infers no shapes: refused, naming the phase.
spmd_run(phase_shape_inference_refused refuse 2 "has no shape-inference phase" 60
         --model mlp --mesh 2 --baseline ddp --inject-fault fail:shape-inference:1)

# Refusals, on every rank, before any compute.
spmd_run(refuse_mesh_size refuse 2 "mesh 2x2 has 4 devices but the job has 2 ranks" 60
         --model mlp --mesh 2x2)
add_test(NAME spmd_plan_file_setup
  COMMAND $<TARGET_FILE:autopar> plan --model mlp --mesh 2x2 --hardware cpu --baseline fsdp
          --format json --out ${CMAKE_CURRENT_BINARY_DIR}/spmd_mlp_2x2.json)
autopar_timeout(test_timeout 60)
set_tests_properties(spmd_plan_file_setup PROPERTIES FIXTURES_SETUP spmd_plan_file TIMEOUT ${test_timeout})
spmd_run(plan_file_runs ok 4 check 120 --model mlp --plan
         ${CMAKE_CURRENT_BINARY_DIR}/spmd_mlp_2x2.json --steps 2 --check)
spmd_run(refuse_plan_ranks refuse 2 "the plan's mesh 2x2 has 4 devices but the job has 2 ranks" 60
         --model mlp --plan ${CMAKE_CURRENT_BINARY_DIR}/spmd_mlp_2x2.json)
spmd_run(refuse_changed_graph refuse 4 "changed since planning" 60
         --model mlp --batch 64 --plan ${CMAKE_CURRENT_BINARY_DIR}/spmd_mlp_2x2.json)
set_tests_properties(spmd_run_plan_file_runs spmd_run_refuse_plan_ranks spmd_run_refuse_changed_graph
  PROPERTIES FIXTURES_REQUIRED spmd_plan_file)

# --memory-by-node: the memory model holds at every position, not only at the
# peak (mlp under FSDP on 2x2: gathers, reduce-scatters, eager reduction).
spmd_run(memory_by_node_exact ok 4 "memory by node: .*largest difference \\+0 B" 120
         --model mlp --mesh 2x2 --baseline fsdp --steps 2
         --memory-by-node ${CMAKE_CURRENT_BINARY_DIR}/memory_by_node.csv)
