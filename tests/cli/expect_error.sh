# Sourced by the CLI tests: expect_error TEXT ARGS... runs "$locus" ARGS
# and fails the test (fail=1) unless it ends in an error (exit 1 for a
# refused run, CLI11's 100-115 for a refused argument; never a signal, 134
# being an abort, nor a hang past 60 s) whose output names TEXT.
fail=0
expect_error() {  # TEXT ARGS...
  local text=$1
  shift
  local out status
  out=$(timeout 60 "$locus" "$@" 2>&1)
  status=$?
  if [ $status -eq 0 ] || [ $status -ge 124 ] || ! grep -q -- "$text" <<<"$out"; then
    echo "FAIL: locus $* -> exit $status, expected an error naming '$text':"
    echo "$out" | tail -3
    fail=1
  fi
}
