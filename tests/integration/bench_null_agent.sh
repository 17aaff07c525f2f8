#!/usr/bin/env bash
# The null agent of bench/fig-agent-overhead's ablation
# (tests/tools/null_agent.c) on JDK 17 and 25: each mode leaves the JVM
# running its program to a normal exit, takes the capabilities jpbpf's
# agent takes at start-up, and (counted with ",count") gets the events
# that mode enables and no others; a bad option stops the JVM's start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
NULL=$TOOLS/null_agent.so
t_need_tool "$NULL"

# field NAME LINE: the number after the word NAME in the null agent's
# report (count mode's line on stderr at VMDeath).
field() {
	sed -n "s/.*\<$1 \([0-9]*\).*/\1/p" <<<"$2"
}

# run JDK JAVA OPTS: HotInline for half a second with the null agent;
# sets $rc, $out (stdout) and $err (stderr).
run() {
	local f=$TESTTMP/null-$1-$3
	"$2" -agentpath:"$NULL"${3:+=$3} -cp "$WL" HotInline 0.5 >"$f.out" 2>"$f.err"
	rc=$?
	out=$(cat "$f.out")
	err=$(cat "$f.err")
}

ran_ok() { [ "$rc" = 0 ] && [[ $out == "HotInline rounds="* ]]; }

# plain MODE: what the bench loads: the program runs, nothing is printed.
plain() {
	run "$1" "$2" "$3"
	t_check "$1 $3: the JVM runs HotInline and exits 0, the agent silent (exit $rc)" \
		eval 'ran_ok && [ -z "$err" ]'
}

caps_ok() {
	[ "$(field can_compiled_method_load "$1")" = 1 ] && [ "$(field can_get_bytecodes "$1")" = 1 ] &&
		[ "$(field can_all_class_hook "$1")" = 1 ] && [ "$(field can_early_class_hook "$1")" = 0 ] &&
		[ "$(field can_retransform "$1")" = 0 ]
}

counted() {
	local jdk=$1 java=$2 line
	run "$jdk" "$java" caps,count
	line=$(grep '^null_agent: caps:' <<<"$err")
	t_check "$jdk caps: the agent's start-up capabilities, no event but VMDeath ($line)" \
		eval 'ran_ok && caps_ok "$line" && [ "$(field class_file_load_hook "$line")" = 0 ] &&
			[ "$(field dynamic_code "$line")" = 0 ]'
	run "$jdk" "$java" events,count
	line=$(grep '^null_agent: events:' <<<"$err")
	t_check "$jdk events: every event posted, no inline record read ($line)" \
		eval 'ran_ok && caps_ok "$line" && [ "$(field compiled_method_load "$line")" -gt 0 ] &&
			[ "$(field dynamic_code "$line")" -gt 0 ] && [ "$(field class_file_load_hook "$line")" -gt 100 ] &&
			[ "$(field class_prepare "$line")" -gt 100 ] && [ "$(field thread_start_end "$line")" -gt 0 ] &&
			[ "$(field inline_frames "$line")" = 0 ]'
	run "$jdk" "$java" inline,count
	line=$(grep '^null_agent: inline:' <<<"$err")
	# HotInline's callees are inlined: some pcs have more than one frame.
	t_check "$jdk inline: the inline records read, with inlined frames ($line)" \
		eval 'ran_ok && [ "$(field compiled_method_load "$line")" -gt 0 ] &&
			[ "$(field inline_frames "$line")" -gt "$(field inline_pcs "$line")" ]'
}

while read -r jdk java; do
	for mode in caps events inline; do plain "$jdk" "$java" "$mode"; done
	counted "$jdk" "$java"
	for bad in "" bogus inline,verbose; do
		run "$jdk" "$java" "$bad"
		t_check "$jdk: option '$bad' refused: the JVM does not start (exit $rc)" \
			eval '[ "$rc" != 0 ] && [[ $err == *"null_agent: bad options"* ]] && [[ $out != *HotInline* ]]'
	done
done < <(agent_jdks)
[ "$_t_n" -gt 0 ] || t_skip "null agent" "no JDK 17 or 25 installed"
t_done
