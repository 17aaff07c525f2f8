# Helpers for the sim_*.sh suites (sourced after lib.sh; not a suite).
#   sim_setup            checks that jpbpf-sim is built (else skips the suite)
#   sim_meta DIR KEY     a value of DIR/meta.json, KEY like sim.lost_pct
#   sim_field OUT NAME   the number after NAME= in a verify output
#   ge A B               succeeds if A >= B (decimals)
#   sim_flow_tool        sets FT to tests/tools/flow_tool (bails out if not built)
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$top/build}"
: "${SIM:=$BUILD/jpbpf-sim}"

sim_setup() {
	if [ ! -x "$SIM" ]; then
		t_skip "jpbpf-sim" "not built ($SIM)"
		t_done
		exit 0
	fi
}

sim_flow_tool() {
	: "${TOOLS:=$BUILD/asan/tests/tools}"
	FT=$TOOLS/flow_tool
	[ -x "$FT" ] || { echo "Bail out! $FT not built (make unit-tests)"; exit 1; }
}

sim_meta() {
	jq -r ".$2" "$1/meta.json"
}

sim_field() {
	sed -n "s/.*[ :]$2=\([0-9]*\).*/\1/p" "$1" | head -1
}

# sim_verify DIR OUT: run verify, keep its stdout in OUT, succeed on match
# with a non-empty truth fully decoded.
sim_verify() {
	"$SIM" verify "$1" >"$2" 2>"$2.err" || { sed 's/^/# /' "$2.err" "$2"; return 1; }
	grep -q ': match$' "$2" || return 1
	local t d
	t=$(sed -n 's/^verify: \([0-9]*\) truth instructions.*/\1/p' "$2")
	d=$(sed -n 's/.* \([0-9]*\) decoded instructions.*/\1/p' "$2")
	[ -n "$t" ] && [ "$t" -gt 0 ] && [ -n "$d" ] && [ "$d" -gt 0 ]
}

ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# sim_javac_workloads JDK DIR: SimLoop and SimWork compiled by JDK into
# DIR; on a javac error, a failed check with javac's messages, status 1.
sim_javac_workloads() {
	mkdir -p "$2"
	"$1/bin/javac" -d "$2" "$top/tests/workloads/SimLoop.java" \
		"$top/tests/workloads/SimWork.java" 2>"$2.err" && return 0
	t_fail "$(basename "$1" | cut -d- -f1-2): javac SimLoop SimWork"
	sed 's/^/# /' "$2.err"
	return 1
}
