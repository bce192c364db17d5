# Shared by the by-hand build scripts in bench/. Source it after setting
# BUILD (the build directory): step NAME CMD... runs CMD, prints and appends
# its wall time to $BUILD/times.txt (STEP_WIDTH: the name column, default 10).
TIMES=$BUILD/times.txt
: >"$TIMES"
step() { # step NAME CMD... : run CMD, record its wall time
    name=$1; shift
    echo "== $name: $*"
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    printf "%-${STEP_WIDTH:-10}s %8.1f s\n" "$name" "$(echo "$t1 - $t0" | bc)" | tee -a "$TIMES"
}
