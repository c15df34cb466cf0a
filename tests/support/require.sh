# Sourced by the shell tests: `require_or_skip CONDITION-COMMAND REASON`.
# A missing dependency makes the test skip (exit 77, CTest's SKIP_RETURN_CODE)
# with the reason, except under CI=true, where it fails naming the dependency,
# so a CI run never passes by skipping (tests/support/require.h for GoogleTest).
require_or_skip() {
  local reason=$2
  if ! eval "$1" >/dev/null 2>&1; then
    case "${CI:-}" in
      true | 1 | yes)
        echo "FAIL: missing dependency (CI=true does not allow skipping): $reason"
        exit 1
        ;;
    esac
    echo "SKIP: $reason"
    exit 77
  fi
}
