#!/usr/bin/env bash
# report --format flow, raw and the summary's coverage and loss figures
# on simulated bundles, checked against the ground truth: at 0% loss the
# decoded and certain events of `flow --full --json` are the truth's
# bytecode events in order (tests/tools/flow_export_check), the branch
# directions are the truth's, coverage is the truth's distinct bcis;
# ranges lose no event; a real JVM's flow names source lines; --thread
# takes a name; bad input fails with one line; the progress bar shows on
# a terminal only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
: "${TOOLS:=$BUILD/asan/tests/tools}"
CHECK=$TOOLS/flow_export_check
t_need_tool "$CHECK"

# --- a hand-made scenario at 0% loss: exact agreement ---------------------
b=$TESTTMP/xflow
rm -rf "$b"
"$SIM" scenario -o "$b" --threads 2 --iters 50 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --seed 2 >/dev/null 2>&1
t_expect_exit 1 "flow before decode: exit 1" "$JPBPF" report "$b" --format flow
t_check "... saying to run decode" grep -q "run 'jpbpf decode' first" "$TESTTMP/err.$$"
"$JPBPF" decode -q "$b" >"$b.dec" 2>&1
"$JPBPF" report "$b" --format flow --full --json -o "$b.full" 2>"$b.err"
t_check "flow --full --json: every line is a JSON object (jq)" \
	sh -c "[ -s '$b.full' ] && jq -e 'type == \"object\" and has(\"tid\") and has(\"t\") and has(\"status\")' '$b.full' >/dev/null"
events=$(jq '.flow.events' <("$JPBPF" info "$b" --json))
t_check "--full: one line per flow event ($(wc -l <"$b.full") = $events)" \
	[ "$(wc -l <"$b.full")" = "$events" ]
"$CHECK" seq "$b" "$b.full" >"$b.seq" 2>&1
sed 's/^/# /' "$b.seq"
t_check "0% loss: decoded+certain events = truth's bytecodes, branch directions the truth's" \
	grep -q ': match$' "$b.seq"
t_check "... and the check looked at branches" \
	sh -c "[ \$(sed -n 's/.* \([0-9]*\) branch directions checked.*/\1/p' '$b.seq') -gt 100 ]"
"$JPBPF" report "$b" --format flow --json >"$b.ranges"
t_check "ranges: counts add up to every event, each range within one method" \
	[ "$(jq -s 'map(.count) | add' "$b.ranges")" = "$events" ]
t_check "ranges: fewer lines than events, bci_end >= bci" \
	sh -c "[ \$(wc -l <'$b.ranges') -lt $events ] && jq -e 'select(.bci != null) | .bci_end >= .bci' '$b.ranges' >/dev/null"
"$JPBPF" report "$b" --format summary --json >"$b.sum"
"$CHECK" coverage "$b" "$b.sum" >"$b.cov" 2>&1
sed 's/^/# /' "$b.cov"
t_check "summary coverage: covered bcis = the truth's, every method" grep -q ': match$' "$b.cov"
t_check "summary: time per method adds up to at most the total" \
	jq -e '([.methods_by_time[].time_ns] | add) <= .time_ns and .time_ns > 0' "$b.sum"

# --- threads by name ------------------------------------------------------
# the agent's Java names, as `jpbpf info` lists them
name=$(jq -r '.java_threads[] | select(.tid != 0) | .name' <("$JPBPF" info "$b" --json) | head -1)
comm=$(jq -r --arg n "$name" '.threads[] | select(.tid != 0) | .name' <("$JPBPF" info "$b" --json) | head -1)
tid=$("$JPBPF" report "$b" --format flow --json --thread "$name" | jq -s 'map(.tid) | unique | .[]')
t_check "--thread '$name' selects one thread ($tid)" \
	sh -c "[ \$(echo '$tid' | wc -w) = 1 ] && [ '$tid' -gt 0 ]"
t_check "--thread TID gives the same flow" \
	bash -c "'$JPBPF' report '$b' --format flow --thread '$tid' | cmp -s - <('$JPBPF' report '$b' --format flow --thread '$name')"
t_check "--thread takes the kernel's name too ('$comm')" \
	bash -c "'$JPBPF' report '$b' --format summary --json --thread '$comm' | jq -e '.threads == 1' >/dev/null"
t_expect_exit 1 "unknown thread name: exit 1" "$JPBPF" report "$b" --format flow --thread no-such-thread
t_check "... one line listing the threads with tid and name" \
	sh -c "[ \$(wc -l <'$TESTTMP/err.$$') = 1 ] && grep -q \"threads: .*$tid \" '$TESTTMP/err.$$'"
t_expect_exit 1 "unknown tid: exit 1" "$JPBPF" report "$b" --format raw --thread 999999
t_expect_exit 1 "unwritable -o: exit 1" "$JPBPF" report "$b" --format flow -o /nonexistent/dir/f
t_expect_exit 1 "not a bundle: exit 1" "$JPBPF" report /nonexistent --format flow

# --- raw ------------------------------------------------------------------
"$JPBPF" report "$b" --format raw --thread "$tid" >"$b.raw"
devents=$(grep -cE '^ *[0-9]+ +[0-9]+ (interp|compiled|transition|gap) ' "$b.raw")
t_check "raw: a header and one line per decoded event ($devents)" \
	sh -c "head -1 '$b.raw' | grep -q '^thread $tid' && [ $devents -gt 100 ]"
all=$("$JPBPF" report "$b" --format raw | grep -cE '^ *[0-9]+ +[0-9]+ (interp|compiled|transition|gap) ')
t_check "raw: every decoded event of every thread ($all = info's)" \
	[ "$all" = "$(jq '.decoded.events' <("$JPBPF" info "$b" --json))" ]

# --- loss -----------------------------------------------------------------
l=$TESTTMP/xflow-loss
rm -rf "$l"
"$SIM" scenario -o "$l" --threads 2 --iters 60 >/dev/null 2>&1
"$SIM" synth "$l" --cpus 2 --jit-invoke 5 --seed 2 --loss 10 >/dev/null 2>&1
"$JPBPF" decode -q "$l" >/dev/null 2>&1
"$JPBPF" report "$l" --format summary --json >"$l.sum"
gaps=$("$JPBPF" report "$l" --format raw | grep -cE '^ *[0-9]+ +[0-9]+ gap ')
t_check "10% loss: summary's gaps = raw's gap events = info's ($gaps)" \
	bash -c "[ $gaps -gt 0 ] && [ \$(jq .loss.gaps '$l.sum') = $gaps ] && [ \$(jq .decoded.gaps <('$JPBPF' info '$l' --json)) = $gaps ]"
rec=$("$JPBPF" report "$l" --format flow --full --json | jq -s 'map(select(.status == "recovered")) | length')
t_check "10% loss: the flow marks recovered events, as many as the summary ($rec)" \
	sh -c "[ $rec -gt 0 ] && [ \$(jq .loss.recovered '$l.sum') = $rec ]"

# --- a real JVM's truth: source lines, branches, coverage of its classes ---
jdk=/usr/lib/jvm/java-17-openjdk-amd64
if [ -x "$jdk/bin/javac" ] && [ -f "$AGENT" ]; then
	cls=$TESTTMP/xflow-cls
	mkdir -p "$cls"
	"$jdk/bin/javac" -d "$cls" "$top/tests/workloads/ModelControl.java" 2>/dev/null
	j=$TESTTMP/xflow-jvm
	rm -rf "$j"
	"$SIM" truth -o "$j" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" ModelControl 200 \
		>/dev/null 2>&1
	"$SIM" synth "$j" --cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 5 >/dev/null 2>&1
	"$JPBPF" decode -q "$j" >/dev/null 2>&1
	"$JPBPF" report "$j" --format flow --full --json >"$j.full"
	n=$(wc -l <"$j.full")
	# reconstruction itself misplaces a few events (eval's DA < 1); at
	# most 0.1% may not align
	"$CHECK" seq "$j" "$j.full" $((n / 1000)) >"$j.seq" 2>&1
	sed 's/^/# /' "$j.seq" | tail -4
	t_check "ModelControl: decoded+certain events align with the truth (<= 0.1% off), branches all right" \
		grep -q ': match$' "$j.seq"
	want=$(grep -n 'int s = 0;' "$top/tests/workloads/ModelControl.java" | head -1 | cut -d: -f1)
	got=$(jq -r 'select(.method == "ModelControl.loop(I)I" and .bci == 0) | "\(.file):\(.line)"' "$j.full" | head -1)
	t_check "source line of ModelControl.loop @0 is the source's 'int s = 0;' ($got, want ModelControl.java:$want)" \
		[ "$got" = "ModelControl.java:$want" ]
	t_check "text flow: ranges with file:line and branch directions" \
		sh -c "'$JPBPF' report '$j' --format flow | grep -E 'ModelControl.loop\(I\)I @[0-9]+\.\.[0-9]+ .*ModelControl.java:[0-9]+.* (taken|not taken)$' | grep -q ."
	t_check "--thread main: the main thread, by the name it had before DestroyJavaVM" \
		sh -c "'$JPBPF' report '$j' --format flow --thread main | head -1 | grep -q '^thread [0-9]* \"DestroyJavaVM\"\$'"
	"$JPBPF" report "$j" --format summary --json >"$j.sum"
	"$CHECK" coverage "$j" "$j.sum" ModelControl. 2 >"$j.cov" 2>&1
	sed 's/^/# /' "$j.cov"
	t_check "ModelControl coverage = the truth's (within 2 bcis: the trace's last event)" \
		grep -q ': match$' "$j.cov"
	t_check "class coverage: ModelControl's code length and branches from its class file" \
		jq -e '.coverage.classes[] | select(.class == "ModelControl") | .code_length > 100 and .branches > 5 and .branches_both + .branches_one + .branches_none == .branches and .file == "ModelControl.java"' "$j.sum"
else
	t_skip "real JVM flow: lines and coverage" "no JDK 17 javac or agent not built"
fi

# --- progress bar: on a terminal only -------------------------------------
if command -v script >/dev/null; then
	script -qfc "'$JPBPF' report '$b' --format flow --full -o '$b.tty'" /dev/null >"$b.script" 2>&1
	t_check "progress bar on a terminal (script): drawn with CR and a percentage" \
		sh -c "grep -q \$(printf '\r')'flow \[' '$b.script' && grep -q '100%' '$b.script'"
	script -qfc "'$JPBPF' report '$b' --format flow --full -q -o '$b.tty'" /dev/null >"$b.script-q" 2>&1
	t_check "-q on a terminal: no bar" sh -c "! grep -q 'flow \[' '$b.script-q'"
	script -qfc "'$JPBPF' decode '$l'" /dev/null >"$b.script-dec" 2>&1
	t_check "jpbpf decode on a terminal: decode and flow bars, then the summaries" \
		sh -c "grep -q 'decode \[' '$b.script-dec' && grep -q 'flow \[' '$b.script-dec' && grep -q 'flow: 2 threads, ' '$b.script-dec'"
	"$JPBPF" decode "$l" >"$b.dec-notty" 2>&1
	t_check "jpbpf decode not on a terminal: no control characters" \
		sh -c "! grep -q \$(printf '[\r\033]') '$b.dec-notty'"
	"$JPBPF" report "$b" --format flow --full -o "$b.notty" 2>"$b.notty.err"
	t_check "not a terminal: stderr empty, no control characters in the output" \
		sh -c "[ ! -s '$b.notty.err' ] && ! grep -q \$(printf '[\r\033]') '$b.notty'"
else
	t_skip "progress bar" "no script(1)"
fi
t_done
