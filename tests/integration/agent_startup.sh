#!/usr/bin/env bash
# The agent loaded with -agentpath on JDK 17 and 25: interpreter codelets,
# dispatch tables, compiled methods with inline stacks, classes, threads,
# and the `jvm` section of `jpbpf info`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup

run_jdk() {
	local name=$1 java=$2 out=$TESTTMP/startup-$1
	local s=$out.summary
	if ! "$java" -agentpath:"$AGENT"=out="$out" -cp "$WL" HotInline 1.5 \
		>"$out.stdout" 2>"$out.stderr"; then
		t_fail "$name: JVM with agent exits 0"; sed 's/^/# /' "$out.stderr"
		return
	fi
	t_check "$name: workload output intact" grep -q "HotInline rounds=" "$out.stdout"
	t_check "$name: agent finished its streams" grep -qx ok "$out/agent.done"
	"$CHECK" summary "$out" >"$s" 2>"$out.notes"
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
	t_check "$name: dispatch tables recorded" \
		[ "$(grep -c 'no .* dispatch table' "$out.notes")" = 0 ]
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

while read -r name java; do
	run_jdk "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "agent at start-up" "no JDK found"
t_done
