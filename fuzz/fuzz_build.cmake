# The fuzz build (-DAUTOPAR_FUZZ=ON, made by scripts/fuzz.sh in build-fuzz/):
# clang's libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer, and
# one fuzzer per loader. libtorch and MPI stay out: each libtorch translation
# unit costs ~19 s and 1.2 GB, and no loader needs one. The aten schema list
# comes from another build (AUTOPAR_ATEN_SCHEMAS, see src/ir/CMakeLists.txt).
#
# Build time is kept small (CI builds this after the normal build) by
# instrumenting only what reads the inputs: the ir, cost and pipeline
# libraries, and the loader files of sharding and planner. The rest (autodiff,
# models, memory, most of sharding and planner) only builds the fixtures and
# plans the plan target reads against, and is compiled uninstrumented. -O0
# halves the instrumented compile time; the loaders stay fast enough.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "AUTOPAR_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                      "configure with CXX=clang++-14, or run scripts/fuzz.sh")
endif()
if(NOT AUTOPAR_ATEN_SCHEMAS OR NOT EXISTS "${AUTOPAR_ATEN_SCHEMAS}")
  message(FATAL_ERROR "AUTOPAR_FUZZ needs -DAUTOPAR_ATEN_SCHEMAS=PATH, the aten_schemas.inc a "
                      "normal build wrote (build/src/ir/aten_schemas.inc); got '${AUTOPAR_ATEN_SCHEMAS}'")
endif()
# Every finding must stop the run: no UBSan report is only printed.
set(AUTOPAR_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                       -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)
add_subdirectory(src)
foreach(lib autopar_ir autopar_cost autopar_pipeline)
  target_compile_options(${lib} PRIVATE ${AUTOPAR_FUZZ_FLAGS})
endforeach()
# Loader code in the fixture libraries: sharding and mesh text, pins.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/sharding/mesh.cc
                            ${PROJECT_SOURCE_DIR}/src/sharding/placement.cc DIRECTORY src/sharding
                            PROPERTIES COMPILE_OPTIONS "${AUTOPAR_FUZZ_FLAGS}")
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/planner/pins.cc DIRECTORY src/planner
                            PROPERTIES COMPILE_OPTIONS "${AUTOPAR_FUZZ_FLAGS}")
add_subdirectory(fuzz)
