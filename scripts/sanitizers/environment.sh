# Sourced by scripts/test.sh --sanitize: how the sanitizers report, and what
# they are told to ignore. Every suppression lives in a file next to this one
# with the reason written above it. mpirun passes this environment to the ranks
# it starts on this machine.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# abort_on_error=0, exitcode 66: a report fails the process with a code no
# autopar path uses, so a test cannot mistake it for an expected failure.
export ASAN_OPTIONS="exitcode=66:abort_on_error=0:detect_stack_use_after_return=0:strict_init_order=1:suppressions=$here/asan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66:suppressions=$here/ubsan.supp"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
# Time limits inside the test scripts (`timeout N mpirun ...`) grow by this
# factor, as CMake's test limits do (tests/CMakeLists.txt, autopar_timeout).
export AUTOPAR_TEST_TIMEOUT_SCALE=8
# mpirun's ranks get ASan's slow unwinder, so that Open MPI's leak reports reach
# the library lsan.supp names: bin/mpirun says why, and why only there.
export PATH="$here/bin:$PATH"
