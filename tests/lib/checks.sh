# Shared by the end-to-end test scripts (source it): named checks, each printed PASS or FAIL, and the closing
# "N passed, N failed" line whose exit status says whether all passed.

passed=0
failed=0

# check NAME COMMAND...: runs the command and counts it; a failing check does not stop the others.
check() {
  local name="$1"
  shift
  if "$@"; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    failed=$((failed + 1))
  fi
}

# The closing line; returns non-zero when any check failed.
summary() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
