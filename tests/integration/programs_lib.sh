# Helpers for the suites on real programs from Debian packages
# (tests/workloads/programs/run), sourced after lib.sh; not a suite.
#   programs_setup            sim_setup, then skips the suite without the
#                             agent or JDK 17
#   programs_args NAME        sets $args to NAME's java arguments, or says
#                             skip (package absent) or fail (harness) and
#                             returns 1
#   programs_truth NAME B MAX a ground truth in B of at most MAX bytecodes
#                             from NAME's measured method; B.stdout and
#                             B.stderr keep the JVM's output
#   programs_window NAME B N  programs_truth, checked to hold exactly N
#                             bytecodes; else a failed check, returns 1
. "$(dirname "$0")/sim_lib.sh"
: "${AGENT:=$BUILD/libjpbpf-agent.so}"
PROGS=$top/tests/workloads/programs/run
export JPBPF_PROGRAMS_OUT=$TESTTMP/programs
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java

programs_setup() {
	sim_setup
	if [ ! -f "$AGENT" ] || [ ! -x "$JAVA" ]; then
		t_skip "real programs" "agent or JDK 17 missing"
		t_done
		exit 0
	fi
}

programs_args() {
	if ! "$PROGS" list | grep -qx "$1"; then
		t_skip "$1" "Debian package $("$PROGS" package "$1") not installed"
		return 1
	fi
	if ! args=$("$PROGS" args "$1" 2>"$TESTTMP/$1.args"); then
		t_fail "$1: harness compiles"; sed 's/^/# /' "$TESTTMP/$1.args"
		return 1
	fi
}

programs_truth() {
	# shellcheck disable=SC2086 # args is one line of words by contract
	"$SIM" truth -o "$2" --agent "$AGENT" --from "$("$PROGS" window "$1")" --max "$3" -- \
		"$JAVA" $args >"$2.stdout" 2>"$2.stderr"
}

# programs_window NAME B N: a truth window in B from NAME's measured method
# that holds exactly N bytecodes (`jpbpf info`'s truth.bytecodes).  Prints
# nothing when it does; when the JVM fails or the count differs, a
# "not ok" line with the tail of the JVM's stderr, and returns 1.  The
# caller reports the success, if it counts it as a check.
programs_window() {
	if ! programs_truth "$1" "$2" "$3" ||
		[ "$("$JPBPF" info "$2" --json 2>/dev/null | jq -r '.truth.bytecodes')" != "$3" ]; then
		t_fail "$1: truth window of $3 bytecodes"; sed 's/^/# /' "$2.stderr" | tail -5
		return 1
	fi
}
