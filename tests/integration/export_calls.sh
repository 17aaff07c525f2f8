#!/usr/bin/env bash
# The call-structure exports (`jpbpf report --format cct|calls|contexts|
# folded|perfetto`, docs/EXPORTS.md) on simulated bundles:
# - against the ground truth: on flows equal to the truth (export_check
#   mkflow: a thread decoded completely), every context's invocations and
#   bytecodes, the call trace and each bytecode's context id equal the
#   truth's; for the hand-made scenario and, with a JDK, real JVM runs of
#   workloads with virtual calls, exceptions, recursion and threads;
# - on reconstructed flows at 0% and 20% loss: the exports agree with
#   each other and with the flow (consistency, not equality);
# - every format's output parses (jq), the Chrome trace is well formed
#   (every B has its E per thread, times monotonic per thread), --expand
#   agrees with the context table, thresholds, -o, bad input.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
: "${TOOLS:=$BUILD/asan/tests/tools}"
: "${AGENT:=$BUILD/libjpbpf-agent.so}"
EC=$TOOLS/export_check
t_need_tool "$EC"

# exports DIR TID|all: cct, calls, contexts JSON of one thread or all
exports() {
	local opt=""
	[ "$2" = all ] || opt="--thread $2"
	# shellcheck disable=SC2086
	"$JPBPF" report "$1" --format cct --json $opt -o "$1.cct.$2" &&
	"$JPBPF" report "$1" --format calls --json $opt -o "$1.calls.$2" &&
	"$JPBPF" report "$1" --format contexts --json $opt -o "$1.ctx.$2"
}

# equal_truth NAME DIR: a copy of DIR whose flow is its truth; every
# thread's exports equal the truth's
equal_truth() {
	local p=$2.truthflow tid out ok=0 n=0
	rm -rf "$p"; cp -r "$2" "$p"; rm -rf "$p/flow"
	"$EC" mkflow "$p" >"$p.mk" 2>&1 || { t_fail "$1: mkflow"; sed 's/^/# /' "$p.mk"; return; }
	for tid in $(sed -n 's/^mkflow: thread \([0-9]*\):.*/\1/p' "$p.mk"); do
		n=$((n + 1))
		out=$p.eq.$tid
		if exports "$p" "$tid" 2>"$out.err" &&
		   "$EC" equal "$p" "$tid" "$p.cct.$tid" "$p.calls.$tid" "$p.ctx.$tid" >"$out" 2>&1; then
			ok=$((ok + 1))
			sed "s/^/# $1 tid $tid: /" "$out"
		else
			sed "s/^/# $1 tid $tid: /" "$out.err" "$out" | head -12
		fi
	done
	t_check_sh "$1: cct, calls, contexts equal the truth on all $n threads of a complete flow ($ok ok)" \
		'[ "$n" -gt 0 ] && [ "$ok" = "$n" ]'
}

# consistent NAME DIR: the exports of a reconstructed flow
consistent() {
	if exports "$2" all 2>"$2.err" &&
	   "$EC" consistent "$2" "$2.cct.all" "$2.calls.all" "$2.ctx.all" >"$2.cons" 2>&1; then
		sed "s/^/# $1: /" "$2.cons"
		t_ok "$1: cct, calls, contexts consistent with each other and the flow"
	else
		sed "s/^/# $1: /" "$2.err" "$2.cons" | head -12
		t_fail "$1: cct, calls, contexts consistent with each other and the flow"
	fi
}

# jqok ARGS: jq -e without output
jqok() { jq -e "$@" >/dev/null; }

# chrome_ok FILE: per thread every B has its E, in order; times monotonic
chrome_ok() {
	jq -e '.traceEvents as $ev | [$ev[].tid] | unique | all(. as $t |
		[$ev[] | select(.tid == $t and (.ph == "B" or .ph == "E"))] |
		reduce .[] as $e ({ok: true, st: [], t: -1};
			(if $e.ts < .t then .ok = false else .t = $e.ts end) |
			if $e.ph == "B" then .st += [$e.name]
			elif (.st | length) > 0 and .st[-1] == $e.name then .st |= .[:-1]
			else .ok = false end) |
		.ok and (.st | length) == 0)' "$1" >/dev/null
}

sc=$TESTTMP/exp-scenario
rm -rf "$sc"
"$SIM" scenario -o "$sc" --threads 2 --iters 40 >/dev/null 2>&1
"$SIM" synth "$sc" --cpus 1 --jit-invoke 5 >/dev/null 2>&1
"$JPBPF" decode "$sc" >"$sc.dec" 2>&1
t_check "scenario: decoded and reconstructed" grep -q '^flow: 2 threads' "$sc.dec"
equal_truth scenario "$sc"
consistent "scenario, 0% loss" "$sc"

# Every format, text and JSON.
R() { "$JPBPF" report "$sc" "$@"; }
t_check "cct --json: valid JSON, a node per context" \
	jqok '(.nodes | length) == .contexts and .contexts > 0' "$sc.cct.all"
total=$(jq .bytecodes "$sc.cct.all"); lost=$(jq .lost "$sc.cct.all")
R --format cct >"$sc.cct.txt"
t_check "cct text: header and the tree" \
	sh -c "head -1 '$sc.cct.txt' | grep -q '^cct: 2 threads, $total bytecodes' && grep -q 'Sim.main' '$sc.cct.txt'"
R --format cct --top 1 --min-share 5 >"$sc.cct.thr"
t_check "cct --top 1 --min-share 5: no context shown under 5%" \
	awk 'NR > 2 && !/more contexts/ { sub("%", "", $1); if ($1 + 0 < 5) exit 1 }' "$sc.cct.thr"
t_check "... and fewer lines than the full tree" \
	[ "$(wc -l <"$sc.cct.thr")" -lt "$(wc -l <"$sc.cct.txt")" ]
t_check "calls --json: JSON Lines" jqok . "$sc.calls.all"
R --format calls >"$sc.calls.txt"
t_check "calls text: a call line with its call site" grep -Eq ' call +[0-9]+ .*> .* from .* @[0-9]+$' "$sc.calls.txt"
t_check "contexts --json: JSON Lines, runs and a table" \
	sh -c "jq -e . '$sc.ctx.all' >/dev/null && grep -q '\"ctx\"' '$sc.ctx.all' && grep -q '\"context\"' '$sc.ctx.all'"
R --format contexts >"$sc.ctx.txt"
t_check "contexts text: header, threads, runs, table" \
	sh -c "head -1 '$sc.ctx.txt' | grep -qx 'jpbpf-contexts 1' && grep -q '^thread ' '$sc.ctx.txt' && grep -Eq '^[0-9]+\*[0-9]+$' '$sc.ctx.txt' && grep -q '^contexts ' '$sc.ctx.txt'"
deep=$(jq -s 'map(select(.context)) | last | .context' "$sc.ctx.all")
R --format contexts --expand "$deep" >"$sc.expand" 2>&1
"$EC" stack "$sc.ctx.all" "$deep" >"$sc.stack"
t_check "contexts --expand $deep prints the table's stack, root first" \
	sh -c "[ \$(wc -l <'$sc.expand') -ge 2 ] && diff '$sc.expand' '$sc.stack'"
R --format folded >"$sc.folded"
t_check "folded: only 'frame;frame N' lines" \
	sh -c "[ -s '$sc.folded' ] && ! grep -Evq '^[^ ;]+(;[^ ;]+)* [0-9]+\$' '$sc.folded'"
fsum=$(awk '{ s += $NF } END { print s }' "$sc.folded")
t_check "folded: weights add up to the bytecodes ($fsum = $total)" [ "$fsum" = "$total" ]
t_check "folded: unknown events under [unknown] ($lost)" \
	sh -c "[ '$lost' = 0 ] || grep -qx '\[unknown\] $lost' '$sc.folded'"
R --format folded --weight time >"$sc.folded.t"
tsum=$(awk '{ s += $NF } END { print s }' "$sc.folded.t")
t_check "folded --weight time: weights add up to the attributed ns ($tsum)" \
	[ "$tsum" = "$(jq .time_ns "$sc.cct.all")" ]
R --format perfetto -o "$sc.trace.json"
t_check "perfetto: valid JSON, a thread_name and slices per thread" \
	jqok '([.traceEvents[] | select(.ph == "M")] | length) == 2 and ([.traceEvents[] | select(.ph == "B")] | length) > 0' "$sc.trace.json"
t_check "perfetto: every B has its E per thread, times monotonic" chrome_ok "$sc.trace.json"
t_check "perfetto: scenario's unknown events show as gaps" \
	sh -c "[ '$lost' = 0 ] || jq -e '[.traceEvents[] | select(.ph == \"i\")] | length > 0' '$sc.trace.json' >/dev/null"
R --format calls --json >"$sc.calls.stdout"
t_check "-o FILE writes what stdout gets" cmp -s "$sc.calls.stdout" "$sc.calls.all"
t1=$(ls "$sc/flow" | sed -n 's/^tid\([0-9]*\)\.jpb$/\1/p' | head -1)
R --format cct --json --thread "$t1" >"$sc.cct.one"
t_check "--thread $t1: one thread's tree" jqok '.threads == 1 and .thread == '"$t1" "$sc.cct.one"

# Bad input: one line on stderr, non-zero exit.
one_line() { [ "$(wc -l <"$TESTTMP/err.$$")" = 1 ]; }
noflow=$TESTTMP/exp-noflow
rm -rf "$noflow"; cp -r "$sc" "$noflow"; rm -rf "$noflow/flow"
for f in cct calls contexts folded perfetto; do
	t_expect_exit 1 "$f without flow/: exit 1" "$JPBPF" report "$noflow" --format "$f"
	t_check "... one line saying so" sh -c "grep -q 'no reconstructed flow' '$TESTTMP/err.$$' && [ \$(wc -l <'$TESTTMP/err.$$') = 1 ]"
done
t_expect_exit 1 "unknown thread: exit 1" R --format cct --thread 999999
t_check "... one line" one_line
t_expect_exit 1 "--expand of an id not in the table: exit 1" R --format contexts --expand 99999999
t_check "... one line" one_line
t_expect_exit 2 "--expand with --format cct: usage error" R --format cct --expand 1
t_expect_exit 2 "--weight bogus: usage error" R --format folded --weight bogus
t_expect_exit 2 "--min-share 200: usage error" R --format cct --min-share 200
t_expect_exit 1 "-o into a missing directory: exit 1" R --format perfetto -o /nonexistent/x.json
t_expect_exit 1 "not a bundle: exit 1" "$JPBPF" report /nonexistent --format calls
dmg=$TESTTMP/exp-damaged
rm -rf "$dmg"; cp -r "$sc" "$dmg"
truncate -s -100 "$dmg/flow/tid$t1.jpb"
t_expect_exit 0 "a truncated flow stream: exported up to the damage, exit 0" \
	"$JPBPF" report "$dmg" --format cct --json -o "$dmg.cct"
t_check "... with a warning naming the stream and offset" \
	grep -q "warning: flow/tid$t1: record at offset [0-9]* truncated" "$TESTTMP/err.$$"
t_check "... and fewer bytecodes than the intact flow" \
	[ "$(jq .bytecodes "$dmg.cct")" -lt "$total" ]

# Real JVM truths: virtual calls, exceptions, recursion, a second thread.
jdk=/usr/lib/jvm/java-17-openjdk-amd64
if [ -x "$jdk/bin/javac" ] && [ -f "$AGENT" ]; then
	cls=$TESTTMP/exp-cls
	mkdir -p "$cls"
	"$jdk/bin/javac" -d "$cls" "$top"/tests/workloads/Model*.java \
		"$top/tests/workloads/SimLoop.java" "$top/tests/workloads/SimWork.java" 2>/dev/null
	for wl in ModelCalls ModelExceptions SimLoop; do
		b=$TESTTMP/exp-$wl
		rm -rf "$b" "$b.truth"
		"$SIM" truth -o "$b.truth" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" $wl 200 \
			>/dev/null 2>&1
		cp -r "$b.truth" "$b"
		"$SIM" synth "$b" --cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 5 \
			>/dev/null 2>&1
		"$JPBPF" decode "$b" >"$b.dec" 2>&1 || { t_fail "$wl: decode"; continue; }
		equal_truth "$wl" "$b"
		consistent "$wl, 0% loss" "$b"
	done
	b=$TESTTMP/exp-SimLoop
	"$JPBPF" report "$b" --format cct --json --fold-recursion -o "$b.fold"
	t_check "SimLoop --fold-recursion: fewer contexts, the same bytecodes ($(jq .contexts "$b.fold") < $(jq .contexts "$b.cct.all"))" \
		jqok --slurpfile k "$b.cct.all" '.contexts < $k[0].contexts and .bytecodes == $k[0].bytecodes and .fold_recursion' "$b.fold"
	t_check "SimLoop --fold-recursion: no context has its method above it" \
		jqok '(.nodes | map({key: (.id | tostring), value: .}) | from_entries) as $n |
			all(.nodes[]; . as $x | [recurse($n[(.parent | tostring)] // empty) | .method] | .[1:] | index($x.method) == null)' "$b.fold"
	l20=$TESTTMP/exp-SimLoop-20
	rm -rf "$l20"; cp -r "$b.truth" "$l20"
	"$SIM" synth "$l20" --cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 5 --loss 20 \
		>/dev/null 2>&1
	"$JPBPF" decode "$l20" >"$l20.dec" 2>&1
	consistent "SimLoop, 20% loss" "$l20"
	t_check "SimLoop, 20% loss: the walker reports stack breaks ($(jq .breaks "$l20.cct.all"))" \
		[ "$(jq .breaks "$l20.cct.all")" -gt 0 ]
	"$JPBPF" report "$l20" --format perfetto -o "$l20.trace.json"
	gaps_ok() { jqok '[.traceEvents[] | select(.ph == "i")] | length > 0' "$1" && chrome_ok "$1"; }
	t_check "SimLoop, 20% loss: Chrome trace well formed, gaps marked" gaps_ok "$l20.trace.json"
else
	t_skip "real JVM truths (ModelCalls, ModelExceptions, SimLoop)" "no JDK 17 javac or agent not built"
fi
t_done
