# Sourced by scripts/test.sh: runs the suite's steps one by one, printing
# `step <name>: <s> s` after each and a table of them all at the end (also
# when a step fails), so every run says where its time went.

step_names=()
step_secs=()
step_status=()

# step NAME COMMAND...: runs COMMAND as the step NAME; a failure ends the run.
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  printf '==> step %s\n' "$name" >&2
  "$@" || rc=$?
  step_names+=("$name")
  step_secs+=($((SECONDS - start)))
  step_status+=("$([ "$rc" = 0 ] && echo ok || echo "failed ($rc)")")
  printf 'step %s: %d s\n' "$name" "$((SECONDS - start))" >&2
  return "$rc"
}

# The table of the steps that ran (called from the exit trap).
steps_summary() {
  ((${#step_names[@]})) || return 0
  local i total=0
  printf '\n%-22s %8s  %s\n' step seconds status >&2
  for i in "${!step_names[@]}"; do
    printf '%-22s %8d  %s\n' "${step_names[$i]}" "${step_secs[$i]}" "${step_status[$i]}" >&2
    total=$((total + step_secs[i]))
  done
  printf '%-22s %8d\n' total "$total" >&2
}

# no_compiling LOG: fails when cargo compiled anything in LOG (after the
# build step everything must be built already).
no_compiling() {
  if grep -E '^\s*Compiling \S+ v[0-9]' "$1" >&2; then
    printf 'error: cargo compiled after the build step (above): a new feature set or profile\n' >&2
    return 1
  fi
}
