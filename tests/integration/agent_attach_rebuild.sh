#!/usr/bin/env bash
# Late attach, classes no loader gives back as a resource (docs/AGENT.md,
# "Late attach"): by default (retransform=never) their class files are
# rebuilt from JVMTI with no safepoint; retransform=auto retransforms them
# in one call (a RedefineClasses safepoint).  Both on JDK 17 and 25, on
# tests/workloads/RuntimeClasses.java; and every loaded class of HotInline
# rebuilt (noresource) against the same classes retransformed and read
# from their resources: exception tables, max_stack and BootstrapMethods
# (from HotSpot's metadata) included.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
agent_setup_attach

# run_rc NAME JAVA MODE: RuntimeClasses with the agent attached after its
# classes are set up (MODE: never or auto), the class linked after the
# attach run once the agent records; -Xlog:safepoint to $out.sp.
run_rc() {
	local name=$1 java=$2 mode=$3 out=$TESTTMP/rc-$1-$3 i
	"$java" -Xlog:safepoint:file="$out.sp" -cp "$WL" RuntimeClasses "$out.go" \
		>"$out.jvmout" 2>"$out.jvmerr" &
	local jpid=$!
	for i in $(seq 150); do
		grep -q "^ready" "$out.jvmout" 2>/dev/null && break
		sleep 0.1
	done
	if [ "$mode" = never ]; then
		local rc
		"$ATTACH" "$jpid" "$AGENT" "$out.bad" 0 retransform=sometimes \
			>"$out.badtool" 2>&1
		rc=$?
		t_check "$name: retransform=sometimes refused (exit $rc), named, JVM running" \
			bash -c '[ "$1" = 1 ] && kill -0 "$2" &&
				grep -q "bad option .retransform=sometimes." "$3"' \
			_ "$rc" "$jpid" "$out.jvmerr"
	fi
	"$ATTACH" "$jpid" "$AGENT" "$out" -1 "retransform=$mode" >"$out.tool" 2>&1
	t_check "$name: attach with retransform=$mode" [ $? = 0 ] ||
		sed 's/^/# /' "$out.tool"
	touch "$out.go"
	wait "$jpid"
	t_check "$name ($mode): the workload ran to its end" \
		grep -q "RuntimeClasses payload=41808 later=133950" "$out.jvmout"
	"$CHECK" summary "$out" >"$out.summary" 2>"$out.notes"
	"$CHECK" class_flags "$out" >"$out.flags" 2>/dev/null
	"$CHECK" missing "$out" >"$out.missing" 2>/dev/null
}

# flag_of OUT CLASS: the jvm_class flags of CLASS (a regex) in OUT.flags.
flag_of() {
	awk -v c="^$2\$" '$1 ~ c { print $2; exit }' "$1.flags"
}

rebuild_never() {
	local name=$1 java=$2 out=$TESTTMP/rc-$1-never
	run_rc "$name" "$java" never
	t_check "$name: no RetransformClasses call, no jvm_pause record" \
		[ "$(agent_json "$out.summary" pauses)" = 0 ]
	t_check "$name: no RedefineClasses safepoint (-Xlog:safepoint)" \
		bash -c '! grep -q RedefineClasses "$1"' _ "$out.sp"
	t_check "$name: the note says what was rebuilt" \
		grep -Eq "retransform=never.*: [1-9][0-9]* rebuilt from JVMTI.* 0 retransformed in 0 RetransformClasses calls" "$out.notes"
	t_check "$name: class defined from bytes before attach: rebuilt (flag 8)" \
		[ "$(flag_of "$out" 'RuntimeClasses\$Payload')" = 8 ]
	t_check "$name: class defined before attach, linked after: rebuilt when prepared" \
		[ "$(flag_of "$out" 'RuntimeClasses\$Later')" = 8 ]
	t_check "$name: dynamic proxy rebuilt" \
		[ "$(flag_of "$out" '.*\$Proxy[0-9]+')" = 8 ]
	case $name in
	openjdk-17) t_check "$name: reflection accessor rebuilt" \
		[ "$(flag_of "$out" 'jdk/internal/reflect/GeneratedMethodAccessor[0-9]+')" = 8 ] ;;
	esac
	t_check "$name: none of them reported missing" \
		bash -c '! grep -Eq "RuntimeClasses\\\$(Payload|Later)|\\\$Proxy[0-9]" "$1"' _ "$out.missing"
	t_check "$name: every class file parses" [ "$(agent_json "$out.summary" bad_classes)" = 0 ]
	"$JPBPF_PLAIN" info "$out" --json >"$out.info" 2>/dev/null
	t_check "$name: jpbpf info counts them (jvm.classes_rebuilt $(agent_json "$out.info" jvm.classes_rebuilt))" \
		[ "$(agent_json "$out.info" jvm.classes_rebuilt)" -ge 3 -a \
		  "$(agent_json "$out.info" jvm.classes_retransformed)" = 0 ]
	"$TOOLS/class_code_check" --model "$out" >"$out.model"
	t_check "$name: the program model builds from them ($(tr -d '\n' <"$out.model"))" \
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
sys.exit(0 if d["bad_classes"]==0 and d["bad_cfgs"]==0 and d["cfgs"]>100 else 1)' "$out.model"
}

rebuild_auto() {
	local name=$1 java=$2 out=$TESTTMP/rc-$1-auto
	run_rc "$name" "$java" auto
	t_check "$name (auto): one RetransformClasses call, recorded as a jvm_pause" \
		[ "$(agent_json "$out.summary" pauses)" = 1 ]
	t_check "$name (auto): it stopped the JVM at a RedefineClasses safepoint" \
		grep -q RedefineClasses "$out.sp"
	t_check "$name (auto): the class defined from bytes retransformed (flag 1)" \
		[ "$(flag_of "$out" 'RuntimeClasses\$Payload')" = 1 ]
	# Rebuilt against retransformed: the same methods, code, lines,
	# max_locals, max_stack, exception tables and header.
	"$TOOLS/class_code_check" --rebuilt "$TESTTMP/rc-$name-never" "$out" >"$out.cmp"
	t_check "$name: rebuilt = retransformed ($(tr -d '\n' <"$out.cmp"))" \
		same_files "$out.cmp" 3 0 0
}

# same_files JSON CLASSES METHODS HANDLERS: class_code_check --rebuilt
# compared more than CLASSES classes, METHODS methods, HANDLERS methods
# with an exception table, all equal, max_stack known everywhere.
same_files() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
bad=d["absent"]+d["extra"]+d["code_differ"]+d["exc_differ"]+d["lines_differ"]+d["header_differ"]+d["locals_differ"]+d["stack_differ"]+d["stack_unknown"]+d["bsm_differ"]+d["unparsable"]
n=[int(x) for x in sys.argv[2:]]
sys.exit(0 if bad==0 and d["compared"]>=n[0] and d["methods"]>=n[1] and d["exc_methods"]>=n[2] else 1)' "$@"
}

# Every prepared class of a JVM rebuilt (noresource: no resource is read)
# against the same classes retransformed (retransform=always) and read
# from their loaders' resources (retransform=never, the default).
rebuild_all() {
	local name=$1 java=$2 out=$TESTTMP/all-$1 mode jpid
	for mode in noresource retransform=always retransform=never; do
		"$java" -cp "$WL" HotInline 3 >"$out.$mode.jvmout" 2>&1 &
		jpid=$!
		wait_jvm_ready "$jpid"
		"$ATTACH" "$jpid" "$AGENT" "$out.$mode" 0.3 "$mode" \
			>"$out.$mode.tool" 2>&1 || sed 's/^/# /' "$out.$mode.tool"
		wait "$jpid"
	done
	"$CHECK" summary "$out.noresource" >"$out.sum" 2>"$out.notes"
	t_check "$name: noresource rebuilds the loaded classes, no pause" \
		[ "$(agent_json "$out.sum" pauses)" = 0 -a \
		  "$(agent_json "$out.sum" from_resource)" = 0 ]
	"$TOOLS/class_code_check" --rebuilt "$out.noresource" "$out.retransform=always" >"$out.cmp"
	t_check "$name: all rebuilt = retransformed, exception tables, max_stack and BootstrapMethods included ($(tr -d '\n' <"$out.cmp"))" \
		same_files "$out.cmp" 200 2000 300
	"$TOOLS/class_code_check" --rebuilt "$out.noresource" "$out.retransform=never" >"$out.res"
	t_check "$name: all rebuilt = the real class files read from resources ($(tr -d '\n' <"$out.res"))" \
		same_files "$out.res" 200 2000 300
	# A constant pool with invokedynamic needs the BootstrapMethods
	# attribute, which JVMTI does not give: it comes from the pool's
	# operands, equal to the real file's (above), for lambdas' host
	# classes and string concatenation (HotInline itself) alike.
	t_check "$name: classes with invokedynamic rebuilt: lambda hosts and string concatenation" \
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
sys.exit(0 if d["bsm_classes"]>=10 and d["bsm_lambda"]>=5 and d["bsm_concat"]>=1 else 1)' "$out.res"
	t_check "$name: HotInline (string concatenation) rebuilt, flag 8" \
		[ "$("$CHECK" class_flags "$out.noresource" 2>/dev/null | awk '$1 == "HotInline" { print $2 }')" = 8 ]
	t_check "$name: nothing missing, the note counts the tables ($(grep -o '[0-9]* rebuilt methods with exception tables[^)]*)[^)]*)' "$out.notes"))" \
		bash -c '[ -z "$("$1" missing "$2" 2>/dev/null)" ] &&
			grep -Eq " [1-9][0-9]* rebuilt methods with exception tables and max_stack from HotSpot.s metadata, 0 without \(none\); [1-9][0-9]* rebuilt classes with BootstrapMethods, 0 not" "$3"' \
		_ "$CHECK" "$out.noresource" "$out.notes"
}

while read -r name java; do
	rebuild_never "$name" "$java"
	rebuild_auto "$name" "$java"
	rebuild_all "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "attach rebuild" "no JDK found"
t_done
