#!/usr/bin/env bash
# A missing dependency under CI=true fails the test and names the dependency;
# without CI it skips. Checked both ways for a GoogleTest test (the headless
# browser check, chromium made missing through AUTOPAR_CHROMIUM) and for the
# shell tests' require_or_skip.
#   missing_dependency_test.sh TEST_REPORT_HTML_BINARY
set -u
binary=$1
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
missing=/nonexistent/chromium

out=$(CI=true AUTOPAR_CHROMIUM=$missing "$binary" --gtest_filter='ReportInBrowser.*' 2>&1)
rc=$?
echo "$out" | tail -5
[ "$rc" -ne 0 ] || fail "CI=true: the browser test passed without chromium"
echo "$out" | grep -q "missing dependency (CI=true does not allow skipping): chromium not found" ||
  fail "CI=true: the failure does not name chromium"

out=$(env -u CI AUTOPAR_CHROMIUM=$missing "$binary" --gtest_filter='ReportInBrowser.*' 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "without CI: exit $rc, expected a skip"
echo "$out" | grep -q '\[  SKIPPED \]' || fail "without CI: the test did not skip"

out=$(CI=true bash -c ". '$here/require.sh'; require_or_skip false 'the-dependency (apt install it)'" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "CI=true: require_or_skip exited $rc, expected 1"
echo "$out" | grep -q "the-dependency (apt install it)" || fail "CI=true: require_or_skip did not name it"
out=$(env -u CI bash -c ". '$here/require.sh'; require_or_skip false 'the-dependency'" 2>&1)
[ $? -eq 77 ] || fail "without CI: require_or_skip did not skip (77)"
out=$(CI=true bash -c ". '$here/require.sh'; require_or_skip true 'x'; echo ran" 2>&1)
[ "$out" = ran ] || fail "a present dependency stopped the test: $out"
echo PASS
