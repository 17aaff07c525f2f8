#!/usr/bin/env bash
# The agent at start-up keeps class data sharing on (it does not ask for
# early ClassFileLoadHook events, which turn CDS off) and still records
# every class: those loaded before the hook posts are caught up at VMInit
# from the runtime image, checked against the loaded bytecodes
# (docs/AGENT.md, "Loading").  JDK 17 and 25.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
DUMP=$TOOLS/cds_check
t_need_tool "$DUMP"

# every_class NAME OUT [ALLOWED]: every class -Xlog:class+load listed,
# but ALLOWED of them, has bytes or a jvm_class_missing record (hidden
# classes: Foo$$Lambda/0x... in the log, Foo$$Lambda.0x... in the bundle).
every_class() {
	local name=$1 out=$2 allowed=${3:-0} nlog nbad
	sed -n 's/.*\[class,load\] \([^ ]*\) source:.*/\1/p' "$out.loaded" |
		tr . / >"$out.names"
	"$CHECK" classes "$out" 2>/dev/null >"$out.classes"
	"$CHECK" missing "$out" 2>/dev/null >"$out.missing"
	nlog=$(wc -l <"$out.names")
	nbad=$(python3 - "$out.names" "$out.classes" "$out.missing" <<'PY'
import sys
names = [l.strip() for l in open(sys.argv[1]) if l.strip()]
have = set(l.strip().replace(".0x", "/0x") for l in open(sys.argv[2]))
miss = set(l.strip()[1:-1].split(".0x")[0].split("/0x")[0]
           for l in open(sys.argv[3]) if l.strip())
bad = [n for n in names if n not in have and n.split("/0x")[0] not in miss]
for b in bad[:5]:
    print("# without bytes or missing record:", b, file=sys.stderr)
print(len(bad))
PY
)
	t_check "$name: all $nlog loaded classes have bytes or a missing record (${nbad:-?} not, $allowed allowed)" \
		[ "$nlog" -gt 300 -a "${nbad:-1}" = "$allowed" ]
	local dups
	dups=$("$CHECK" class_flags "$out" 2>/dev/null | cut -d' ' -f1 | sort | uniq -d | wc -l)
	t_check "$name: no class recorded twice ($dups are)" [ "$dups" = 0 ]
}

cds_on() {
	grep -Eq "Opened (shared )?archive" "$1" && ! grep -qi "CDS is disabled" "$1"
}

# note_num OUT TEXT: the number right before TEXT in the catch-up note.
note_num() {
	grep 'caught up at VMInit' "$1.notes" | sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p" | head -1
}

run_jdk() {
	local name=$1 java=$2 out=$TESTTMP/cds-$1 v
	local home=${java%/bin/java}
	if ! "$java" -Xlog:cds=info:file="$out.cds" \
		-Xlog:class+load=info:file="$out.loaded" \
		-agentpath:"$AGENT"=out="$out" -cp "$WL" HotInline 1.0 \
		>"$out.stdout" 2>"$out.stderr"; then
		t_fail "$name: JVM with agent exits 0"; sed 's/^/# /' "$out.stderr"
		return
	fi
	t_check "$name: workload output intact" grep -q "HotInline rounds=" "$out.stdout"
	t_check "$name: agent finished its streams" grep -qx ok "$out/agent.done"
	t_check "$name: -Xlog:cds: the archive is opened, CDS not disabled" \
		cds_on "$out.cds"
	v=$(grep -c "source: shared objects file" "$out.loaded")
	t_check "$name: classes come from the shared archive ($v)" [ "$v" -ge 300 ]
	"$CHECK" summary "$out" >"$out.summary" 2>"$out.notes"
	v=$(note_num "$out" loaded)
	t_check "$name: the catch-up note counts the loaded classes (${v:-none})" \
		[ "${v:-0}" -ge 300 ]
	v=$(note_num "$out" "read from the runtime image")
	t_check "$name: most caught-up classes read from the runtime image (${v:-none})" \
		[ "${v:-0}" -ge 250 ]
	t_check "$name: every caught-up class had its resource" \
		grep -q 'caught up at VMInit: .*; not from resources (none): 0 rebuilt' "$out.notes"
	t_check "$name: nothing retransformed, no pause" \
		[ "$(agent_json "$out.summary" retransformed)" = 0 -a \
		  "$(agent_json "$out.summary" pauses)" = 0 ]
	t_check "$name: all class bytes parse" \
		[ "$(agent_json "$out.summary" bad_classes)" = 0 ]
	every_class "$name" "$out"
	# The caught-up java/lang classes are the image's own files.
	rm -rf "$out.dump" "$out.jimage"
	v=$("$DUMP" "$out" "$out.dump" java/lang/ 2>/dev/null)
	"$home/bin/jimage" extract --dir "$out.jimage" \
		--include 'regex:/java.base/java/lang/[^/]*\.class' \
		"$home/lib/modules" 2>/dev/null
	local nd=0 f
	for f in "$out.dump"/java/lang/*.class; do
		[ -f "$f" ] || continue
		cmp -s "$f" "$out.jimage/java.base/java/lang/${f##*/}" || nd=$((nd + 1))
	done
	t_check "$name: ${v:-0} caught-up java/lang classes equal jimage extract's ($nd differ)" \
		[ "${v:-0}" -ge 50 -a "$nd" = 0 ]
}

# noresource: the catch-up rebuilds every class from JVMTI instead.
run_noresource() {
	local name=$1 java=$2 out=$TESTTMP/cds-nores-$1 v
	"$java" -Xlog:class+load=info:file="$out.loaded" \
		-agentpath:"$AGENT"=out="$out",noresource -cp "$WL" HotInline 0.3 \
		>"$out.stdout" 2>"$out.stderr"
	t_check "$name noresource: workload ran" grep -q "HotInline rounds=" "$out.stdout"
	"$CHECK" summary "$out" >"$out.summary" 2>"$out.notes"
	v=$(note_num "$out" "rebuilt from JVMTI (tables")
	t_check "$name noresource: the catch-up rebuilt the classes (${v:-none})" \
		[ "${v:-0}" -ge 200 ]
	# Classes never prepared cannot be rebuilt (no method list) and never
	# ran: a note counts them, and only they may lack a class file.
	local lost
	lost=$(sed -n 's/.*never prepared.*; \([0-9][0-9]*\) without a resource, not written.*/\1/p' "$out.notes")
	t_check "$name noresource: never-prepared classes counted (${lost:-none})" \
		[ "${lost:-0}" -gt 0 ]
	every_class "$name noresource" "$out" "${lost:-0}"
}

while read -r name java; do
	run_jdk "$name" "$java"
	run_noresource "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "agent and CDS" "no JDK found"
t_done
