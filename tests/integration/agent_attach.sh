#!/usr/bin/env bash
# Dynamic attach (user/attach) to a JVM already running a workload, on
# JDK 17 and 25; a second attach reuses the live session; an attach to a
# JVM in a new pid+mount namespace with a private /tmp.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
agent_setup_attach

attach_running() {
	local name=$1 java=$2 out=$TESTTMP/attach-$1 s
	s=$out.summary
	"$java" -cp "$WL" HotInline 5 >"$out.jvmout" 2>"$out.jvmerr" &
	local jpid=$!
	wait_jvm_ready "$jpid"
	if ! "$ATTACH" "$jpid" "$AGENT" "$out" 1 >"$out.tool" 2>&1; then
		t_fail "$name: attach + finish succeed"; sed 's/^/# /' "$out.tool"
		kill "$jpid" 2>/dev/null; wait "$jpid"
		return
	fi
	t_ok "$name: attach + finish succeed ($(head -1 "$out.tool"))"
	"$CHECK" summary "$out" >"$s" 2>"$out.notes"
	t_check "$name: late_attach recorded" [ "$(agent_json "$s" late_attach)" = 1 ]
	t_check "$name: codelets complete after attach" \
		[ "$(agent_json "$s" std_missing)" = 0 -a "$(agent_json "$s" overlaps)" = 0 ]
	t_check "$name: compiled methods replayed" [ "$(agent_json "$s" nmethods)" -gt 0 ]
	t_check "$name: pre-attach methods flagged coarse" [ "$(agent_json "$s" coarse)" -gt 0 ]
	t_check "$name: pcs in range, names resolve" \
		[ "$(agent_json "$s" bad_pcs)" = 0 -a "$(agent_json "$s" unresolved)" = 0 ]
	t_check "$name: loaded classes read from their loaders' resources" \
		[ "$(agent_json "$s" from_resource)" -gt 100 ]
	t_check "$name: the attach note says how each class was obtained" \
		grep -q "classes on attach (retransform=never): .* from their loaders' resources .* rebuilt from JVMTI .* retransformed" "$out.notes"
	t_check "$name: class bytes parse" [ "$(agent_json "$s" bad_classes)" = 0 ]
	"$CHECK" classes "$out" 2>/dev/null >"$out.classes"
	t_check "$name: running application class obtained" grep -qx HotInline "$out.classes"
	local calls max items retr
	calls=$(agent_json "$s" pauses); max=$(agent_json "$s" max_pause_ns)
	items=$(agent_json "$s" retransform_items); retr=$(agent_json "$s" retransformed)
	# What the resources cannot give is rebuilt from JVMTI by default
	# (retransform=never, docs/AGENT.md): no RetransformClasses call, so
	# no safepoint (agent_attach_rebuild tests retransform=auto).
	t_check "$name: no RetransformClasses call by default ($calls calls, $items classes, $((max / 1000000)) ms)" \
		[ "${calls:-0}" = 0 ]
	t_check "$name: every class passed to retransform was delivered ($retr of $items)" \
		[ "${retr:-0}" -ge "${items:-0}" ]
	t_check "$name: threads running before attach listed with tids" \
		grep -q . <("$JPBPF_PLAIN" info "$out" --json 2>/dev/null |
			python3 -c 'import json,sys; t=json.load(sys.stdin)["threads"]
assert any(x["name"]=="main" and x["nstid"]>0 for x in t)' && echo y)
	wait "$jpid"
	t_check "$name: JVM finished its work normally" grep -q "HotInline rounds=" "$out.jvmout"
	case $name in
	temurin-25) t_check "$name: JDK 21+ warns about the dynamic agent on stderr" \
		grep -q "loaded dynamically" "$out.jvmerr" ;;
	esac
}

# The class files read from the loaders' resources give the same methods
# (code, exception tables, lines) as RetransformClasses gives for the same
# classes (retransform=always) in a second run of the same workload.
attach_same_code() {
	local name=$1 java=$2 out=$TESTTMP/same-$1 mode jpid
	for mode in res ret; do
		"$java" -cp "$WL" HotInline 4 >"$out.$mode.jvmout" 2>&1 &
		jpid=$!
		wait_jvm_ready "$jpid"
		"$ATTACH" "$jpid" "$AGENT" "$out.$mode" 0.5 \
			$([ $mode = ret ] && echo retransform=always) >"$out.$mode.tool" 2>&1 ||
			sed 's/^/# /' "$out.$mode.tool"
		wait "$jpid"
	done
	"$CHECK" summary "$out.ret" >"$out.ret.summary" 2>/dev/null
	t_check "$name: retransform=always retransforms the loaded classes instead" \
		[ "$(agent_json "$out.ret.summary" retransformed)" -gt 100 -a \
		  "$(agent_json "$out.ret.summary" from_resource)" = 0 ]
	"$TOOLS/class_code_check" "$out.res" "$out.ret" >"$out.json"
	local n
	n=$(agent_json "$out.json" compared)
	t_check "$name: resource and retransformed class files compared ($n classes, $(agent_json "$out.json" methods) methods)" \
		[ "${n:-0}" -gt 100 -a "$(agent_json "$out.json" unparsable)" = 0 ]
	t_check "$name: same methods, code, exception tables and lines ($(tr -d '\n' <"$out.json"))" \
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
sys.exit(0 if d["absent"]+d["code_differ"]+d["exc_differ"]+d["lines_differ"]==0 else 1)' "$out.json"
	"$TOOLS/class_code_check" --model "$out.res" >"$out.model"
	t_check "$name: the decoder's program model builds from them ($(tr -d '\n' <"$out.model"))" \
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
sys.exit(0 if d["classes"]>100 and d["bad_classes"]==0 and d["cfgs"]>1000 and d["bad_cfgs"]==0 else 1)' "$out.model"
}

# A class loaded before the attach and linked after it is checked at its
# ClassPrepare against the resource read at attach.
attach_late_link() {
	local name=$1 java=$2 out=$TESTTMP/late-$1 i
	"$java" -cp "$WL" LateLink "$out.go" >"$out.jvmout" 2>"$out.jvmerr" &
	local jpid=$!
	for i in $(seq 100); do
		grep -q "^loaded" "$out.jvmout" 2>/dev/null && break
		sleep 0.1
	done
	"$ATTACH" "$jpid" "$AGENT" "$out" -1 >"$out.tool" 2>&1
	t_check "$name: attach to a JVM with a loaded, unlinked class" [ $? = 0 ]
	touch "$out.go"
	wait "$jpid"
	t_check "$name: the late-linked class ran" grep -q "LateLink work=" "$out.jvmout"
	"$CHECK" summary "$out" >"$out.summary" 2>"$out.notes"
	t_check "$name: unprepared classes deferred to their ClassPrepare" \
		grep -Eq "resources \(.*\), [1-9][0-9]* more read and checked when prepared" "$out.notes"
	t_check "$name: the late-linked class has its resource's class file" \
		grep -qx 'LateLink\$Later 4' <("$CHECK" class_flags "$out")
	t_check "$name: and no missing-class record" \
		bash -c '! grep -q "LateLink\$Later" <("$1" missing "$2")' _ "$CHECK" "$out"
}

# A second load into a recording JVM: same bundle -> reused, no second
# session (one jvm_info record); another bundle -> refused.
attach_twice() {
	local name=$1 java=$2 out=$TESTTMP/twice-$1
	# Long enough for all the loads on a slow box; killed at the end.
	"$java" -cp "$WL" HotInline 60 >"$out.jvmout" 2>"$out.jvmerr" &
	local jpid=$!
	wait_jvm_ready "$jpid"
	"$ATTACH" "$jpid" "$AGENT" "$out" -1 >"$out.t1" 2>&1
	t_check "$name: first attach leaves the agent recording" [ $? = 0 ]
	"$ATTACH" "$jpid" "$AGENT" "$out.other" 0 >"$out.t2" 2>&1
	t_check "$name: attach for another bundle refused while recording" [ $? = 1 ]
	# A copy at another path is a separate library instance to the
	# dynamic linker; it must still find the live session.
	cp "$AGENT" "$TESTTMP/copy-$name-agent.so"
	"$ATTACH" "$jpid" "$TESTTMP/copy-$name-agent.so" "$out.copy" 0 >"$out.t4" 2>&1
	t_check "$name: a copy of the agent at another path also refused" [ $? = 1 ]
	"$ATTACH" "$jpid" "$AGENT" "$out" 0.2 >"$out.t3" 2>&1
	t_check "$name: second attach for the same bundle reuses the session" [ $? = 0 ]
	"$JPBPF_PLAIN" info "$out" --json >"$out.info" 2>/dev/null
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
n=d["streams"]["jvm"]["types"].get("jvm_info",0)
sys.exit(0 if n==1 else 1)' "$out.info"
	t_check "$name: exactly one session recorded (one jvm_info)" [ $? = 0 ]
	t_check "$name: agent says it reused the session" grep -q "session reused" "$out.jvmerr"
	# After that session finished, a new attach starts a fresh one.
	"$ATTACH" "$jpid" "$AGENT" "$out.again" 0.2 >"$out.t5" 2>&1
	t_check "$name: attach after a finished session starts a new one" [ $? = 0 ] ||
		sed 's/^/# /' "$out.t5"
	"$CHECK" summary "$out.again" >"$out.again.sum" 2>/dev/null
	t_check "$name: the new session recorded the interpreter again" \
		[ "$(agent_json "$out.again.sum" codelets)" -gt 200 ]
	t_check "$name: JVM unharmed by the repeated loads" kill -0 "$jpid"
	kill "$jpid"; wait "$jpid" 2>/dev/null
	t_check "$name: no crash report from the JVM" \
		[ -z "$(grep -l 'SIGSEGV\|fatal error' "$out.jvmout" "$out.jvmerr")" ]
}

# JVM in a new pid + mount namespace with a private /tmp: the socket and
# the agent library are reached through /proc/PID/root.
attach_container() {
	local name=$1 java=$2 out=$TESTTMP/ns-$1 s
	s=$out.summary
	if ! unshare --pid --mount --fork true 2>/dev/null; then
		t_skip "$name: attach into a pid+mount namespace" "unshare not permitted"
		return
	fi
	if ! ns_jvm_start "$java" 4 private "$out"; then
		t_fail "$name: JVM in namespace started"; wait "$UPID"; return
	fi
	local upid=$UPID jpid=$JPID
	t_check "$name: target really is in another pid namespace" \
		grep -Eq '^NSpid:[[:space:]]+[0-9]+[[:space:]]+1$' "/proc/$jpid/status"
	t_check "$name: target /tmp is private" \
		[ ! -e "/proc/$jpid/root$WL" ]
	if "$ATTACH" "$jpid" "$AGENT" "$out" 0.5 >"$out.tool" 2>&1; then
		t_ok "$name: attach into the namespace + finish"
	else
		t_fail "$name: attach into the namespace + finish"; sed 's/^/# /' "$out.tool"
	fi
	"$CHECK" summary "$out" >"$s" 2>/dev/null
	t_check "$name: streams copied back into the bundle" \
		[ "$(agent_json "$s" codelets)" -gt 200 -a "$(agent_json "$s" classes)" -gt 100 ]
	t_check "$name: nspid recorded as seen inside" \
		[ "$(agent_json "$out/meta.json" jvm.nspid)" = 1 ]
	t_check "$name: staging directory removed from the target" \
		[ -z "$(ls -d /proc/$jpid/root/tmp/jpbpf-1-* 2>/dev/null)" ]
	wait "$upid"
	t_check "$name: namespaced JVM finished normally" grep -q "HotInline rounds=" "$out.jvmout"
}

# With -XX:+DebugNonSafepoints the pre-attach methods keep full pc maps.
attach_full_debug() {
	local name=$1 java=$2 out=$TESTTMP/dns-$1
	"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
		-cp "$WL" HotInline 3 >/dev/null 2>&1 &
	local jpid=$!
	wait_jvm_ready "$jpid"
	"$ATTACH" "$jpid" "$AGENT" "$out" 0.1 >"$out.tool" 2>&1
	t_check "$name: attach to a JVM with DebugNonSafepoints" [ $? = 0 ]
	"$CHECK" summary "$out" >"$out.summary" 2>/dev/null
	t_check "$name: DebugNonSafepoints: no method flagged coarse" \
		[ "$(agent_json "$out.summary" coarse)" = 0 -a \
		  "$(agent_json "$out.summary" nmethods)" -gt 0 ]
	wait "$jpid"
}

first=1
while read -r name java; do
	[ $first = 1 ] && attach_full_debug "$name" "$java"
	first=0
	attach_running "$name" "$java"
	attach_same_code "$name" "$java"
	attach_late_link "$name" "$java"
	attach_twice "$name" "$java"
	attach_container "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "attach" "no JDK found"
t_done
