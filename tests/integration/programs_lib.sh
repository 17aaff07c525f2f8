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
