# Shared helpers for integration tests (sourced).  Each test prints TAP:
#   ok N - what          not ok N - what          ok N - what # SKIP why
# Use: . "$(dirname "$0")/lib.sh"; then t_ok / t_fail / t_check / t_skip.
_t_n=0
t_ok()   { _t_n=$((_t_n + 1)); echo "ok $_t_n - $*"; }
t_fail() { _t_n=$((_t_n + 1)); echo "not ok $_t_n - $*"; }
t_skip() { _t_n=$((_t_n + 1)); echo "ok $_t_n - $1 # SKIP $2"; }
# t_check "description" command...: ok if the command succeeds.  Returns
# 1 when not, so `t_check ... || diagnostics` prints them (it returned 0
# either way, and the diagnostics of 10 checks never ran).
t_check() {
	local what=$1; shift
	if "$@"; then t_ok "$what"; else t_fail "$what"; return 1; fi
}
# t_check_sh "description" 'CONDITION': ok if the shell CONDITION (eval'd,
# so it may be a list: a && b) holds.  t_check's command is one simple
# command: in `t_check what [ a ] && b`, b is run after it, not checked.
t_check_sh() {
	local _what=$1
	if eval "$2"; then t_ok "$_what"; else t_fail "$_what"; return 1; fi
}
# t_expect_exit CODE "description" command...: ok if it exits with CODE.
t_expect_exit() {
	local code=$1 what=$2; shift 2
	"$@" >"$TESTTMP/out.$$" 2>"$TESTTMP/err.$$"
	local rc=$?
	if [ "$rc" -eq "$code" ]; then t_ok "$what"; else
		t_fail "$what (exit $rc, wanted $code)"
		sed 's/^/# /' "$TESTTMP/err.$$"
	fi
}
t_done() { echo "1..$_t_n"; }
# t_need_tool PATH: bail out unless the Makefile built PATH.
t_need_tool() {
	[ -x "$1" ] || { echo "Bail out! $1 not built (make unit-tests)"; exit 1; }
}
# t_workloads DIR: compile tests/workloads into DIR once per test run.
t_workloads() {
	[ -f "$1/.done" ] && return 0
	"$(dirname "${BASH_SOURCE[0]}")/../workloads/build" "$1" >/dev/null &&
		touch "$1/.done" || { echo "Bail out! workloads"; exit 1; }
}
: "${TESTTMP:=$(mktemp -d)}"
: "${JPBPF:=build/jpbpf}"
