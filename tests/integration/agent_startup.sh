#!/usr/bin/env bash
# The agent loaded with -agentpath on JDK 17 and 25: interpreter codelets,
# dispatch tables, compiled methods with inline stacks, classes, threads,
# and the `jvm` section of `jpbpf info`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup

# check_loaded NAME LOG CLASSES MISSING: every class the JVM logged as
# loaded has its bytes (hidden classes: rebuilt, named Foo$$Lambda.0x...),
# or a jvm_class_missing record.
check_loaded() {
	local name=$1 log=$2 cls=$3 miss=$4
	local nlog nbad
	# "[...][class,load] java.lang.Object source: ..." -> java/lang/Object
	sed -n 's/.*\[class,load\] \([^ ]*\) source:.*/\1/p' "$log" | tr . / >"$log.names"
	nlog=$(wc -l <"$log.names")
	# Hidden classes log as Foo$$Lambda/0x...; JVMTI names them
	# LFoo$$Lambda.0x...; compare the part before the address.
	nbad=$(python3 - "$log.names" "$cls" "$miss" <<'PY'
import sys
names = [l.strip() for l in open(sys.argv[1]) if l.strip()]
have = set(l.strip().replace(".0x", "/0x") for l in open(sys.argv[2]))
miss = set(l.strip()[1:-1].split(".0x")[0].split("/0x")[0] for l in open(sys.argv[3]) if l.strip())
bad = [n for n in names if n not in have and n.split("/0x")[0] not in miss]
for b in bad[:5]:
    print("# without bytes or missing record:", b, file=sys.stderr)
print(len(bad))
PY
)
	t_check "$name: all $nlog loaded classes have bytes or a missing record (${nbad:-?} not)" \
		[ "$nlog" -gt 300 -a "${nbad:-1}" = 0 ]
}

run_jdk() {
	local name=$1 java=$2 out=$TESTTMP/startup-$1
	local s=$out.summary
	if ! "$java" -agentpath:"$AGENT"=out="$out" -Xlog:class+load=info:file="$out.loaded" \
		-cp "$WL" HotInline 1.5 \
		>"$out.stdout" 2>"$out.stderr"; then
		t_fail "$name: JVM with agent exits 0"; sed 's/^/# /' "$out.stderr"
		return
	fi
	t_check "$name: workload output intact" grep -q "HotInline rounds=" "$out.stdout"
	t_check "$name: agent finished its streams" grep -qx ok "$out/agent.done"
	"$CHECK" summary "$out" >"$s" 2>"$out.notes"
	t_check_sh "$name: jvm stream intact to its end" \
		'[ -s "$s" ] && ! grep -Eq "truncated|corrupt|crc" "$out.notes"'
	local v
	t_check "$name: every standard bytecode 0..201 has a codelet" \
		[ "$(agent_json "$s" std_missing)" = 0 ]
	v=$(agent_json "$s" bytecodes_covered)
	t_check "$name: >= 230 bytecodes have a codelet ($v)" [ "${v:-0}" -ge 230 ]
	t_check "$name: codelets do not overlap" [ "$(agent_json "$s" overlaps)" = 0 ]
	t_check "$name: codelets inside the interpreter code" \
		[ "$(agent_json "$s" outside)" = 0 -a "$(agent_json "$s" empty)" = 0 ]
	v=$(agent_json "$s" nmethods)
	t_check "$name: compiled methods recorded ($v)" [ "${v:-0}" -gt 20 ]
	t_check "$name: every pc lies in its nmethod" [ "$(agent_json "$s" bad_pcs)" = 0 ]
	t_check "$name: JVM's defaults: no method flagged coarse" \
		[ "$(agent_json "$s" coarse)" = 0 ]
	t_check "$name: every method id resolves to a name" \
		[ "$(agent_json "$s" unresolved)" = 0 ]
	"$CHECK" inlines "$out" 2>/dev/null >"$out.inl"
	t_check "$name: HotInline.kernel has inline stacks with its callees" \
		grep -Eq 'LHotInline;\.(kernel|step) inlines LHotInline;\.(step|mix|sq)' "$out.inl"
	t_check "$name: code blobs (stubs) recorded" [ "$(agent_json "$s" blobs)" -gt 50 ]
	t_check "$name: all class bytes parse (magic, version)" \
		[ "$(agent_json "$s" bad_classes)" = 0 ]
	"$CHECK" classes "$out" 2>/dev/null >"$out.classes"
	t_check "$name: application class HotInline present" \
		grep -qx HotInline "$out.classes"
	t_check "$name: JDK class java/lang/Thread present" \
		grep -qx java/lang/Thread "$out.classes"
	"$CHECK" missing "$out" 2>/dev/null >"$out.missing"
	check_loaded "$name" "$out.loaded" "$out.classes" "$out.missing"
	t_check "$name: dispatch tables recorded" \
		[ "$(grep -c 'no .* dispatch table' "$out.notes")" = 0 ]
	# The overhead account (docs/AGENT.md): the callbacks' and the
	# writer's CPU time, and no retransform at start-up.
	t_check "$name: summary gives the callbacks' CPU time" \
		grep -Eq 'compiled methods \([0-9.]+ ms of CPU in their callbacks\)' "$out.notes"
	v=$(sed -n 's/.*writer thread: \([0-9.]*\) ms of CPU.*/\1/p' "$out.notes")
	t_check "$name: writer thread reports its CPU time (${v:-none} ms)" \
		awk -v v="${v:-0}" 'BEGIN { exit !(v > 0) }'
	t_check "$name: nothing retransformed at start-up" \
		[ "$(agent_json "$s" retransformed)" = 0 -a "$(agent_json "$s" pauses)" = 0 ]
	if [ -x "$JPBPF_PLAIN" ]; then
		"$JPBPF_PLAIN" info "$out" --json >"$out.info" 2>"$out.infoerr"
		t_check "$name: info jvm.codelets matches" \
			[ "$(agent_json "$out.info" jvm.codelets)" = "$(agent_json "$s" codelets)" ]
		t_check "$name: info jvm.inline_records = pcs with >1 frame" \
			[ "$(agent_json "$out.info" jvm.inline_records)" = "$(agent_json "$s" inline_pcs)" ]
		t_check "$name: info jvm.jdk_version set" \
			[ -n "$(agent_json "$out.info" jvm.jdk_version)" ]
		v=$(agent_json "$out.info" jvm.threads)
		t_check "$name: info jvm.threads ($v) >= 3" [ "${v:-0}" -ge 3 ]
	else
		t_skip "$name: jpbpf info" "no $JPBPF_PLAIN"
	fi
	t_check "$name: meta.json has the jvm object" \
		[ "$(agent_json "$out/meta.json" jvm.late_attach)" = False ]
}

# pcs per KiB of compiled code in summary S, times 10.  Per KiB, not per
# method: which methods the JIT compiles, and how big, differs from run to
# run (pcs per method varied 2x between runs with the same flags), while
# the density of mapped pcs in code does not (17-21 per KiB with all pcs,
# 5-8 with safepoints only, on JDK 17 and 25).
pcs_per_kib() {
	awk -v p="$(agent_json "$1" pcs)" -v n="$(agent_json "$1" code_bytes)" \
		'BEGIN { if (n > 0) printf "%d", 10240 * p / n; else print 0 }'
}

# -XX:-DebugNonSafepoints: HotSpot then maps only safepoint pcs, and the
# agent must say so for every method (docs/AGENT.md, "Overhead").
run_coarse() {
	local name=$1 java=$2 out=$TESTTMP/coarse-$1
	local s=$out.summary full=$TESTTMP/startup-$1.summary
	"$java" -XX:+UnlockDiagnosticVMOptions -XX:-DebugNonSafepoints \
		-agentpath:"$AGENT"=out="$out" -cp "$WL" HotInline 1.5 \
		>"$out.stdout" 2>"$out.stderr"
	t_check "$name: HotInline ran with DebugNonSafepoints off" \
		grep -q "HotInline rounds=" "$out.stdout"
	"$CHECK" summary "$out" >"$s" 2>"$out.notes"
	local n c
	n=$(agent_json "$s" nmethods)
	c=$(agent_json "$s" coarse)
	t_check "$name: DebugNonSafepoints off: all $n methods flagged coarse" \
		[ "${n:-0}" -gt 20 -a "$c" = "$n" ]
	t_check "$name: ... and a note says why" \
		grep -q 'DebugNonSafepoints is set off' "$out.notes"
	local pf pc
	pf=$(pcs_per_kib "$full")
	pc=$(pcs_per_kib "$s")
	t_check "$name: ... with under 70% of the pcs per KiB of code ($pc vs $pf per 10 KiB)" \
		[ "${pc:-0}" -gt 0 -a "$((pc * 10))" -lt "$((pf * 7))" ]
	if [ -x "$JPBPF_PLAIN" ]; then
		t_check "$name: info says coarse_pcmaps" \
			[ "$("$JPBPF_PLAIN" info "$out" --json | jq -r .jvm.coarse_pcmaps)" = true ]
	else
		t_skip "$name: jpbpf info coarse_pcmaps" "no $JPBPF_PLAIN"
	fi
}

# Lambdas are hidden classes: rebuilt from JVMTI (agent_hidden tests more).
lambda_rebuilt() {
	"$CHECK" class_flags "$1" 2>/dev/null |
		grep -Eq '^Threads\$\$Lambda[^ ]*\.0x[0-9a-f]+ 8$' &&
		! grep -q '^LThreads\$\$Lambda' "$1.missing"
}

run_lambdas() {
	local name=$1 java=$2 out=$TESTTMP/lambda-$1
	"$java" -agentpath:"$AGENT"=out="$out" -Xlog:class+load=info:file="$out.loaded" \
		-cp "$WL" Threads 0.3 >"$out.stdout" 2>"$out.stderr"
	t_check "$name: Threads workload ran with the agent" grep -q "Threads done" "$out.stdout"
	"$CHECK" classes "$out" 2>/dev/null >"$out.classes"
	"$CHECK" missing "$out" 2>/dev/null >"$out.missing"
	t_check "$name: the lambda's hidden class is rebuilt (flag 8), not missing" \
		lambda_rebuilt "$out"
	check_loaded "$name" "$out.loaded" "$out.classes" "$out.missing"
}

while read -r name java; do
	run_jdk "$name" "$java"
	run_coarse "$name" "$java"
	run_lambdas "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "agent at start-up" "no JDK found"
t_done
