#!/usr/bin/env bash
# Ground truth over a bounded window (agent options truthfrom=, truthmax=):
# the window starts at the trigger method's bci 0 with its caller listed,
# holds exactly truthmax bytecodes, stops with reason "limit", and the JVM
# then runs on to its normal end; bad window options are refused.  The
# simulator turns a window that starts and ends mid-stack into streams
# libipt decodes exactly, with no resync.  Per JDK present.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
TW=$TOOLS/truth_window
t_need_tool "$TW"
: "${SIM:=$BUILD/jpbpf-sim}"

# javap -c TruthSmall: main is 0 iconst_3, 1 invokestatic loop; loop's
# first 20 bytecodes with loop(3) (add's 4 in between) are:
loop20="0 1 2 3 4 5 6 9 10 11 14 15 18 4 5 6"

window_small() {
	local name=$1 java=$2 out=$TESTTMP/tw-$1
	"$java" -agentpath:"$AGENT"=out="$out",truth,truthfrom=TruthSmall.loop,truthmax=20 \
		-cp "$WL" TruthSmall >"$out.stdout" 2>"$out.stderr"
	t_check "$name: the JVM runs on to its end after the window" grep -qx "result 2" "$out.stdout" ||
		sed 's/^/# /' "$out.stderr"
	"$TW" "$out" >"$out.tw" 2>&1 || { t_fail "$name: truth_window reads the stream"; sed 's/^/# /' "$out.tw"; return; }
	local main
	main=$(awk '$1 == "first" && $4 == "at=LTruthSmall;.loop@0" { sub("nstid=", "", $2); print $2 }' "$out.tw")
	t_check "$name: the window starts at loop's bci 0 (the breakpoint's bytecode)" [ -n "$main" ]
	t_check "$name: its start says trigger, one caller: main at its invoke (bci 1)" \
		grep -qx "start nstid=$main why=trigger depth=1 frames=LTruthSmall;.main@1" "$out.tw"
	t_check "$name: exactly truthmax=20 bytecodes in all" grep -qx "total bytecodes=20 threads=.*" "$out.tw"
	t_check "$name: every started thread stops, by the limit" \
		awk '$1 == "start" { s++ } $1 == "stop" { p++; if ($3 != "why=limit") bad = 1 }
		     END { exit !(s > 0 && s == p && !bad) }' "$out.tw"
	local got
	got=$("$TW" "$out" bcis 'LTruthSmall;.loop' 2>&1)
	t_check "$name: loop's bytecodes in the window are javap's, in order" [ "${got% }" = "$loop20" ]
	[ "${got% }" = "$loop20" ] || echo "# got: $got"
	grep -v '^first\|^total' "$out.tw" | head -5 | sed 's/^/# /'
}

window_limit_only() {
	local name=$1 java=$2 out=$TESTTMP/twl-$1
	"$java" -agentpath:"$AGENT"=out="$out",truth,truthmax=5000 \
		-cp "$WL" TruthSmall >"$out.stdout" 2>"$out.stderr"
	t_check "$name: truthmax alone: program output intact" grep -qx "result 2" "$out.stdout"
	"$TW" "$out" >"$out.tw" 2>&1
	t_check "$name: truthmax alone: from VMInit, exactly 5000 bytecodes" \
		sh -c "grep -q 'why=vminit' '$out.tw' && ! grep -q 'why=trigger' '$out.tw' &&
		       grep -qx 'total bytecodes=5000 threads=.*' '$out.tw'"
}

# A trigger that never fires: the program runs, nothing is recorded, and
# the agent says so (stderr and a note in the jvm stream).
never_said() {
	"$TW" "$1" | grep -qx 'total bytecodes=0 threads=0' &&
		grep -q 'truthfrom=TruthSmall.nosuch never entered (0 methods armed)' "$1.stderr" &&
		grep -q 'note: truth: truthfrom=TruthSmall.nosuch never entered' "$1.notes"
}

window_never() {
	local name=$1 java=$2 out=$TESTTMP/twn-$1
	"$java" -agentpath:"$AGENT"=out="$out",truth,truthfrom=TruthSmall.nosuch \
		-cp "$WL" TruthSmall >"$out.stdout" 2>"$out.stderr"
	t_check "$name: trigger never entered: program output intact" grep -qx "result 2" "$out.stdout"
	"$CHECK" summary "$out" >/dev/null 2>"$out.notes"
	t_check "$name: ... no truth events, and the agent says why (stderr, note)" \
		never_said "$out"
}

bad_options() {
	local name=$1 java=$2 opt
	for opt in truthmax=5 truth,truthmax=0 truth,truthmax=x truth,truthfrom=nodot \
		truth,truthfrom=.m truth,truthfrom=a/B.m; do
		if "$java" -agentpath:"$AGENT"=out="$TESTTMP/twbad",$opt -cp "$WL" TruthSmall \
			>"$TESTTMP/twbad.out" 2>&1; then
			t_fail "$name: '$opt' refused"
		else
			t_check "$name: '$opt' refused with one line naming it" \
				grep -q "jpbpf-agent: not started: .*\(truth\|$opt\)" "$TESTTMP/twbad.out"
		fi
	done
}

# SimWork's compute() runs under main: a window from there, ended by the
# limit in the middle of it, on two simulated CPUs.
window_sim() {
	local name=$1 java=$2 out=$TESTTMP/tws-$1
	if [ ! -x "$SIM" ]; then
		t_skip "$name: simulated window" "jpbpf-sim not built"
		return
	fi
	"$SIM" truth -o "$out" --agent "$AGENT" --from SimWork.compute --max 40000 -- \
		"$java" -cp "$WL" SimWork 200 >"$out.stdout" 2>"$out.stderr"
	t_check "$name: jpbpf-sim truth --from --max: program output intact" grep -q '^result ' "$out.stdout" ||
		sed 's/^/# /' "$out.stderr"
	if ! "$SIM" synth "$out" --cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 7 2>"$out.synth"; then
		t_fail "$name: synth on a window"; sed 's/^/# /' "$out.synth"; return
	fi
	local meta=$out/meta.json
	echo "# $name: $(tail -1 "$out.synth")"
	t_check "$name: synth: the window's callers set up, no resync" \
		sh -c "[ \$(jq .sim.mid_stack_threads '$meta') -ge 1 ] && [ \$(jq .sim.window_frames '$meta') -ge 1 ] &&
		       [ \$(jq .sim.resyncs '$meta') = 0 ] && [ \$(jq .sim.bytecodes '$meta') = 40000 ]"
	if "$SIM" verify "$out" >"$out.verify" 2>&1 && grep -q ': match$' "$out.verify"; then
		t_ok "$name: libipt decodes the window's streams exactly"
	else
		t_fail "$name: libipt decodes the window's streams exactly"; sed 's/^/# /' "$out.verify"
	fi
}

while read -r name java; do
	window_small "$name" "$java"
	window_limit_only "$name" "$java"
	window_never "$name" "$java"
	bad_options "$name" "$java"
	window_sim "$name" "$java"
done < <(agent_jdks)
t_done
