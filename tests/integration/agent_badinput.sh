#!/usr/bin/env bash
# Bad input for the agent and attach: a pid that is not a JVM, a pid that
# does not exist, a JVM that exits during attach or while recording, an
# unwritable output directory, garbage options, truth mode on attach.
# Each gives a clear error and a non-zero exit, and a running target
# keeps running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
agent_setup_attach

java=$(agent_jdks | head -1 | cut -d' ' -f2)
if [ -z "$java" ]; then
	t_skip "bad input" "no JDK found"; t_done; exit 0
fi
B=$TESTTMP/bad

# expect_fail WHAT PATTERN cmd...: exit 1 and PATTERN in the output.
expect_fail() {
	local what=$1 pat=$2; shift 2
	"$@" >"$B.out" 2>&1
	local rc=$?
	if [ $rc = 1 ] && grep -Eq "$pat" "$B.out"; then
		t_ok "$what: $(head -1 "$B.out")"
	else
		t_fail "$what (exit $rc)"; sed 's/^/# /' "$B.out"
	fi
}

# wait_attached OUT PID: until the attach tool PID writes "attached in"
# to OUT; false if it ended without, or after 60 s.
wait_attached() {
	local i
	for i in $(seq 600); do
		grep -q "^attached in" "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

sleep 30 &
spid=$!
expect_fail "pid that is not a JVM" "not a HotSpot JVM" \
	"$ATTACH" "$spid" "$AGENT" "$B-notjvm"
t_check_sh "not-a-JVM target untouched: no trigger file, no signal" \
	'[ ! -e "/proc/$spid/cwd/.attach_pid$spid" ] && kill -0 "$spid"'
kill "$spid"; wait "$spid" 2>/dev/null

expect_fail "pid that does not exist" "no such process" \
	"$ATTACH" 999999 "$AGENT" "$B-nopid"

# One JVM serves the option tests: it must survive all of them.
"$java" -cp "$WL" HotInline 6 >"$B.jvmout" 2>"$B.jvmerr" &
jpid=$!
wait_jvm_ready "$jpid"
expect_fail "garbage agent options" "agent failed to start" \
	"$ATTACH" "$jpid" "$AGENT" "$B-garbage" 0 "x=1,,=,%%%"
t_check "agent names the bad option on the JVM's stderr" \
	grep -q "bad option 'x=1'" "$B.jvmerr"
expect_fail "unwritable output directory" "agent failed to start" \
	"$ATTACH" "$jpid" "$AGENT" "$B-unwritable" 0 "out=/proc/version/bundle"
t_check "agent says why the bundle failed" grep -q "cannot create bundle" "$B.jvmerr"
expect_fail "truth mode on attach refused" "agent failed to start" \
	"$ATTACH" "$jpid" "$AGENT" "$B-truth" 0 "truth"
t_check "agent explains truth is start-up only" grep -q "SingleStep" "$B.jvmerr"
expect_fail "agent library that does not exist" "agent library" \
	"$ATTACH" "$jpid" "$TESTTMP/no-such-agent.so" "$B-nolib"
t_check "target JVM still running after the failed loads" kill -0 "$jpid"
# After all the refusals a real session still works.
"$ATTACH" "$jpid" "$AGENT" "$B-after" 0.2 >"$B.out" 2>&1
t_check "a valid attach still works afterwards" [ $? = 0 ]
wait "$jpid"
t_check "target JVM completed normally" grep -q "HotInline rounds=" "$B.jvmout"

# Attach the moment libjvm.so is mapped: SIGQUIT before HotSpot's Signal
# Dispatcher exists would kill the JVM, so attach must wait for it.  The
# JVM runs 6 s: on a loaded machine (load 7, four builds beside it) start-up
# and the attach's class catch-up took longer than the 2 s it once ran, and
# the attach failed because the JVM had exited, not because of the attach.
# HotSpot's listener also answers before the JVM's live phase: JDK 17 then
# called the agent, which got no JVMTI environment, and JDK 25 refused the
# load (on one loaded CPU: every JDK 17 run, half the JDK 25 runs); the
# agent and the attach now wait for it.
"$java" -cp "$WL" HotInline 6 >"$B.early" 2>&1 &
jpid=$!
for i in $(seq 200); do
	grep -q libjvm.so "/proc/$jpid/maps" 2>/dev/null && break
	sleep 0.01
done
"$ATTACH" "$jpid" "$AGENT" "$B-early" 0.1 >"$B.out" 2>&1
rc=$?
wait "$jpid"
jrc=$?
t_check "attach during JVM start-up succeeds (exit $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/# /' "$B.out" "$B.early" | head -4
t_check_sh "JVM attached during start-up survives (exit $jrc)" \
	'[ $jrc = 0 ] && grep -q "HotInline rounds=" "$B.early"'

# A JVM that dies while the attach waits for its socket (stopped, so it
# never answers, then killed).
"$java" -cp "$WL" HotInline 20 >/dev/null 2>&1 &
jpid=$!
wait_jvm_ready "$jpid"
kill -STOP "$jpid"
( sleep 0.7; kill -KILL "$jpid" ) &
start=$(date +%s%N)
expect_fail "JVM exits during attach" "exited during attach" \
	"$ATTACH" "$jpid" "$AGENT" "$B-dies"
ms=$((($(date +%s%N) - start) / 1000000))
t_check "attach gave up promptly (${ms} ms)" [ "$ms" -lt 4000 ]
t_check "trigger file removed although the JVM is gone" [ ! -e ".attach_pid$jpid" ]
wait "$jpid" 2>/dev/null

# A JVM that exits while the agent records: VMDeath flushes the streams.
# It exits when told, once the attach has returned, and the recording
# runs 5 s after that: a JVM that ran for a fixed time (3 s) ended before
# an attach that takes seconds on a loaded machine had returned.
"$java" -cp "$WL" LambdaCalls 20 "$B.go" >"$B.exitout" 2>&1 &
jpid=$!
for i in $(seq 300); do
	grep -q "^ready" "$B.exitout" 2>/dev/null && break
	sleep 0.1
done
"$ATTACH" "$jpid" "$AGENT" "$B-exit" 5 >"$B.out" 2>&1 &
apid=$!
wait_attached "$B.out" "$apid"
touch "$B.go"
wait "$apid"
t_check "session ends cleanly when the JVM exits while recording" [ $? = 0 ] ||
	sed 's/^/# /' "$B.out"
wait "$jpid"
t_check "... the JVM exited before the finish (it ran to its end)" \
	grep -q "LambdaCalls rounds=20" "$B.exitout"
"$CHECK" summary "$B-exit" >"$B.sum" 2>/dev/null
t_check "streams complete and readable after JVM exit" \
	[ "$(agent_json "$B.sum" codelets)" -gt 200 ]

# A writer backlog too small for the records: drops are counted in a loss
# record, never silent, and the stream stays readable.
"$java" -agentpath:"$AGENT"=out="$B-tiny",maxmem=4k -cp "$WL" TruthSmall >"$B.out" 2>&1
t_check "tiny backlog: JVM unaffected" grep -qx "result 2" "$B.out"
"$CHECK" summary "$B-tiny" >"$B.sum" 2>"$B.notes"
lost=$(sed -n 's/^loss: jvm //p' "$B.notes")
t_check "tiny backlog: drops counted in a loss record (${lost:-none})" [ "${lost:-0}" -gt 0 ]
t_check "tiny backlog: the stream still reads to the end" \
	[ -n "$(agent_json "$B.sum" codelets)" ]

# A JVM killed while the agent records: finish reports it, and the
# stream holds whole records up to the kill.  Killed 0.5 s after the
# attach has returned, 3.5 s before the finish: a kill at a fixed 1.5 s
# could fall into an attach that takes seconds on a loaded machine.
"$java" -cp "$WL" HotInline 20 >/dev/null 2>&1 &
jpid=$!
wait_jvm_ready "$jpid"
"$ATTACH" "$jpid" "$AGENT" "$B-killed" 4 >"$B.kout" 2>&1 &
apid=$!
wait_attached "$B.kout" "$apid" && sleep 0.5
kill -KILL "$jpid"
wait "$apid"
rc=$?
if [ $rc = 1 ] && grep -q "exited before the agent confirmed" "$B.kout"; then
	t_ok "JVM killed while recording: finish says so: $(grep '^finish:' "$B.kout")"
else
	t_fail "JVM killed while recording: finish says so (exit $rc)"; sed 's/^/# /' "$B.kout"
fi
wait "$jpid" 2>/dev/null
"$CHECK" summary "$B-killed" >"$B.sum" 2>"$B.notes"
t_check "killed JVM: the stream's records up to the kill read back" \
	[ "$(agent_json "$B.sum" codelets)" -gt 200 -a "$(agent_json "$B.sum" classes)" -gt 100 ]

# At start-up, a bad option stops the JVM with a message (the JVM's own
# rule for -agentpath), and never a crash.
"$java" -agentpath:"$AGENT"=bogus -version >"$B.out" 2>&1
rc=$?
t_check "-agentpath with garbage options: JVM refuses to start (exit $rc)" \
	[ $rc = 1 ]
t_check "-agentpath garbage: our one-line reason" grep -q "bad option 'bogus'" "$B.out"
"$java" -agentpath:"$AGENT"=out=/proc/version/x -version >"$B.out" 2>&1
rc=$?
t_check_sh "-agentpath unwritable out: exit $rc with reason" \
	'[ $rc = 1 ] && grep -q "cannot create bundle" "$B.out"'
t_done
