#!/usr/bin/env bash
# Compile levels (docs/AGENT.md, "Compile level"): on JDK 17 and 25 every
# jvm_nmethod_load record's level and OSR flag, and every OSR compile's
# entry bci (its jvm_nmethod_osr record), must match what the JVM itself
# prints with -XX:+PrintCompilation for that method, tiered (levels 3 and
# 4 appear), with C2 only (-XX:-TieredCompilation: all 4), with C1 only
# (-XX:TieredStopAtLevel=1: all 1), and by late attach (the methods
# GenerateEvents replays); OsrLoops gives OSR compiles at five known
# bcis.  `jpbpf info` counts them per level.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup
agent_setup_attach
LEVELS=$TOOLS/level_check
t_need_tool "$LEVELS"

# compare MODE PRINTCOMPILATION_LOG LEVEL_CHECK_OUTPUT: one JSON line.
# A record matches a compile of the same method (class::name), OSR or
# not, at the same level; without tiering PrintCompilation prints no
# level (C2 only: 4, native wrappers 0).  "mismatched": the method was
# compiled (PrintCompilation lists it, OSR alike) but never at the
# record's level; "unlisted": PrintCompilation does not list the method
# at all (seen once in ~20 runs: a C1-only JDK 17 run recorded a level-1
# compile of an ASM constructor its log did not list).  An OSR record's
# entry bci must be one PrintCompilation gives ("% ... @ BCI") for the
# method at that level: "bci_mismatched" if not, "bci_missing" if the
# record has none; "osr_set" lists (method, level, bci) of the records.
compare() {
	python3 - "$@" <<'EOF'
import json, re, sys
mode, log, recs = sys.argv[1:4]
norm = lambda s: s.replace('/', '.').replace('+', '.')
printed, ids, printed_bc, osr_bcis = {}, set(), 0, {}
for line in open(log, errors='replace'):
    m = re.match(r'^\s*\d+\s+(\d+)\s+(.*)$', line)
    if not m or int(m.group(1)) in ids:
        continue
    attrs, level, meth = '', None, None
    for t in m.group(2).split():
        if '::' in t:
            meth = norm(t.split('(')[0])
            break
        if t.isdigit():
            level = int(t)
        else:
            attrs += t
    if meth is None or 'COMPILE SKIPPED' in line:
        continue
    ids.add(int(m.group(1)))
    if level is None:
        level = 0 if 'n' in attrs else 4
    key = (meth, '%' in attrs, level)
    printed[key] = printed.get(key, 0) + 1
    at = re.search(r' @ (\d+) ', line)
    if '%' in attrs and at:
        osr_bcis.setdefault((meth, level), set()).add(int(at.group(1)))
    printed_bc += 'n' not in attrs
names = {(m, o) for (m, o, _) in printed}
r = {'records': 0, 'unknown': 0, 'mismatched': 0, 'unlisted': 0,
     'replayed': 0, 'bci_missing': 0, 'bci_mismatched': 0, 'osr_set': [],
     'osr': 0, 'levels': [], 'bytecode_levels': [], 'replay_levels': [],
     'printed': printed_bc, 'covered': 0, 'examples': []}
seen = {}
levels, bc_levels, rp_levels = set(), set(), set()
for line in open(recs):
    lv, osr, bci, native, replay, name = line.split(None, 5)
    lv, osr = int(lv), osr == '1'
    key = (norm(name.strip()), osr, lv)
    if osr and bci == '?':
        r['bci_missing'] += 1
    elif osr:
        r['osr_set'].append([key[0], lv, int(bci)])
        if int(bci) not in osr_bcis.get((key[0], lv), ()):
            r['bci_mismatched'] += 1
            if len(r['examples']) < 3:
                r['examples'].append(line.strip())
    r['records'] += 1
    r['unknown'] += lv == -1
    r['osr'] += osr
    r['replayed'] += replay == '1'
    levels.add(lv)
    if native == '0':
        bc_levels.add(lv)
    if replay == '1':
        rp_levels.add(lv)
    if key in printed:
        # Coverage counts bytecode methods: JVMTI names every
        # method-handle intrinsic wrapper MethodHandle::linkToStatic.
        if native == '0':
            seen[key] = seen.get(key, 0) + 1
    else:
        r['mismatched' if key[:2] in names else 'unlisted'] += 1
        if len(r['examples']) < 3:
            r['examples'].append(line.strip())
r['covered'] = sum(min(n, printed[k]) for k, n in seen.items())
r['levels'] = sorted(levels)
r['bytecode_levels'] = sorted(bc_levels)
r['replay_levels'] = sorted(rp_levels)
r['osr_set'] = sorted(set(map(tuple, r['osr_set'])))
r['printed_osr'] = sorted((m, lv, b) for (m, lv), bs in osr_bcis.items()
                          for b in bs)
print(json.dumps(r))
EOF
}

jq_() { agent_json "$1" "$2"; }

# check NAME MODE OUT: the records of bundle OUT against OUT.pc.
check() {
	local name=$1 mode=$2 out=$3 r=$3.cmp
	if ! "$LEVELS" "$out" >"$out.levels" 2>"$out.lverr"; then
		t_fail "$name/$mode: level_check reads the bundle"
		sed 's/^/# /' "$out.lverr"
		return 1
	fi
	compare "$mode" "$out.pc" "$out.levels" >"$r"
	local n unk mis unl osr bmis bmiss
	n=$(jq_ "$r" records); unk=$(jq_ "$r" unknown)
	mis=$(jq_ "$r" mismatched); unl=$(jq_ "$r" unlisted)
	osr=$(jq_ "$r" osr); bmis=$(jq_ "$r" bci_mismatched)
	bmiss=$(jq_ "$r" bci_missing)
	t_check "$name/$mode: compiled methods recorded ($n)" [ "${n:-0}" -gt 20 ]
	t_check "$name/$mode: every record has a level ($unk unknown)" [ "$unk" = 0 ]
	t_check "$name/$mode: every record's level and OSR flag match a PrintCompilation compile of its method ($mis mismatched of $n)" \
		[ "$mis" = 0 ]
	t_check "$name/$mode: PrintCompilation lists the methods of the records ($unl of $n not listed; at most 1)" \
		[ "${unl:-9}" -le 1 ]
	t_check "$name/$mode: every OSR record has an entry bci ($bmiss of $osr without)" \
		[ "$bmiss" = 0 ]
	t_check "$name/$mode: every OSR entry bci is one PrintCompilation gives its method at that level ($bmis of $osr not)" \
		[ "$bmis" = 0 ]
	[ "$mis$unl$bmis" = 000 ] || echo "# examples: $(jq_ "$r" examples)"
	return 0
}

# run_startup NAME JAVA MODE FLAGS...: HotInline with the agent from
# start-up and PrintCompilation on stdout.
run_startup() {
	local name=$1 java=$2 mode=$3 out=$TESTTMP/level-$1-$3
	shift 3
	"$java" "$@" -XX:+PrintCompilation \
		"-agentpath:$AGENT=out=$out" -cp "$WL" HotInline 3 \
		>"$out.pc" 2>"$out.err"
	if ! grep -q "HotInline rounds=" "$out.pc"; then
		t_fail "$name/$mode: JVM ran the workload"; sed 's/^/# /' "$out.err" | head -5
		return
	fi
	check "$name" "$mode" "$out" || return
	local r=$out.cmp bl cov pr
	bl=$(jq_ "$r" bytecode_levels); cov=$(jq_ "$r" covered); pr=$(jq_ "$r" printed)
	# Compiles still queued at VM exit are never posted: most, not all.
	t_check "$name/$mode: PrintCompilation's bytecode compiles recorded ($cov of $pr)" \
		[ $((cov * 100)) -ge $((pr * 80)) ]
	case $mode in
	tiered)
		t_check "$name/$mode: C1 tier 3 and C2 compiles present (levels $bl)" \
			python3 -c "import sys; l=$bl; sys.exit(not (3 in l and 4 in l))"
		t_check "$name/$mode: an OSR compile recorded as such ($(jq_ "$r" osr))" \
			[ "$(jq_ "$r" osr)" -gt 0 ] ;;
	c2only)
		t_check "$name/$mode: every bytecode method at level 4 ($bl)" [ "$bl" = "[4]" ] ;;
	c1only)
		t_check "$name/$mode: every bytecode method at level 1 ($bl)" [ "$bl" = "[1]" ] ;;
	esac
	"$JPBPF_PLAIN" info "$out" --json >"$out.info" 2>"$out.infoerr"
	t_check "$name/$mode: jpbpf info counts the records per level" \
		python3 - "$out.info" "$out.levels" <<'EOF'
import collections, json, sys
j = json.load(open(sys.argv[1]))['jvm']
c = collections.Counter(l.split()[0] for l in open(sys.argv[2]))
osr = sum(l.split()[1] == '1' for l in open(sys.argv[2]))
assert j['compiled_by_level'] == dict(c), (j['compiled_by_level'], c)
assert sum(c.values()) == j['compiled_methods']
assert j['compiled_level_unknown'] == c.get('-1', 0)
assert j['compiled_osr'] == osr
EOF
}

# run_attach NAME JAVA: attach to a tiered HotInline after 2 s of work.
run_attach() {
	local name=$1 java=$2 out=$TESTTMP/level-$1-attach
	"$java" -XX:+PrintCompilation -cp "$WL" HotInline 5 >"$out.pc" 2>"$out.err" &
	local jpid=$!
	wait_jvm_ready "$jpid"
	sleep 1.5
	if ! "$ATTACH" "$jpid" "$AGENT" "$out" 1 >"$out.tool" 2>&1; then
		t_fail "$name/attach: attach + finish succeed"; sed 's/^/# /' "$out.tool"
		kill "$jpid" 2>/dev/null; wait "$jpid"
		return
	fi
	wait "$jpid"
	check "$name" attach "$out" || return
	local r=$out.cmp
	t_check "$name/attach: replayed methods carry their levels, C2 among them ($(jq_ "$r" replayed) replayed, levels $(jq_ "$r" replay_levels))" \
		python3 -c "import sys; l=$(jq_ "$r" replay_levels); sys.exit(not (4 in l and -1 not in l))"
}

# run_osr NAME JAVA MODE FLAGS...: OsrLoops, whose methods are entered
# by OSR at bcis 4, 25, 5 and 36 (two loops of one method), 6: the
# records' (method, bci) pairs must be PrintCompilation's, at least 4.
run_osr() {
	local name=$1 java=$2 mode=osr-$3 out=$TESTTMP/level-$1-osr-$3
	shift 3
	"$java" "$@" -XX:+PrintCompilation "-agentpath:$AGENT=out=$out" \
		-cp "$WL" OsrLoops >"$out.pc" 2>"$out.err"
	if ! grep -q "OsrLoops sum" "$out.pc"; then
		t_fail "$name/$mode: JVM ran OsrLoops"; sed 's/^/# /' "$out.err" | head -5
		return
	fi
	check "$name" "$mode" "$out" || return
	local r=$out.cmp
	t_check "$name/$mode: OsrLoops' OSR entry bcis recorded are the ones PrintCompilation gives ($(jq_ "$r" osr_set))" \
		python3 - "$r" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
pick = lambda l: {(m, b) for m, lv, b in l if m.startswith('OsrLoops::')}
rec, pr = pick(r['osr_set']), pick(r['printed_osr'])
assert rec == pr, (sorted(rec), sorted(pr))
assert len({b for _, b in rec}) >= 4, rec
EOF2
}

# The lookup alone (agent_level_probe.c, built here with the agent's
# sources): the real code address of every compiled method is found,
# addresses that begin no nmethod all fall back, the JVM lives; and what
# a lookup costs in CPU.
PROBE=$TESTTMP/level_probe.so
build_probe() {
	local jh
	jh=$(dirname "$(dirname "$(readlink -f "$(agent_jdks | head -1 | cut -d' ' -f2)")")")
	cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -shared -fPIC \
		-I"$top/agent" -isystem "$jh/include" -isystem "$jh/include/linux" \
		-o "$PROBE" "$top/tests/integration/agent_level_probe.c" \
		"$top/agent/nmethod_level.c" "$top/agent/vmstructs.c" "$top/agent/symtab.c" \
		-lelf -lpthread 2>"$TESTTMP/probe.cc"
}

run_probe() {
	local name=$1 java=$2 out=$TESTTMP/probe-$1 line
	"$java" "-agentpath:$PROBE" -cp "$WL" HotInline 2 >"$out.out" 2>"$out.err"
	local rc=$?
	line=$(grep "^level_probe: events" "$out.err")
	t_check "$name/probe: JVM survives wrong-address lookups (exit $rc)" \
		grep -q "HotInline rounds=" "$out.out"
	local ev ok wok fb ns first cl
	ev=$(sed -n 's/.*events=\([0-9]*\).*/\1/p' <<<"$line")
	ok=$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<"$line")
	wok=$(sed -n 's/.*wrong_ok=\([0-9]*\).*/\1/p' <<<"$line")
	fb=$(sed -n 's/.*fallbacks=\([0-9]*\).*/\1/p' <<<"$line")
	ns=$(sed -n 's/.* ns=\([0-9]*\).*/\1/p' <<<"$line")
	cl=$(sed -n 's/.*clock_ns=\([0-9]*\).*/\1/p' <<<"$line")
	first=$(sed -n 's/.*first_ns=\([0-9]*\).*/\1/p' <<<"$line")
	t_check "$name/probe: every real code address found (${ok:-?} of ${ev:-?})" \
		[ "${ev:-0}" -gt 20 -a "${ok:-0}" = "${ev:-0}" ]
	t_check "$name/probe: no wrong address accepted, all fell back (${wok:-?} accepted, ${fb:-?} fell back: $(sed -n 's/.*why=\([^ ]*\).*/\1/p' <<<"$line"))" \
		[ "${wok:-1}" = 0 -a "${fb:-0}" -ge $((ev * 10)) ]
	[ "${ev:-0}" -gt 1 ] && echo "# $name: lookup CPU: first (reads the layout) $((first / 1000)) us, then $((ns / (ev - 1))) ns per compiled method (thread CPU clock; the clock itself $((cl / (ev - 1))) ns of it; code heap read in place: $(sed -n 's/.*in_place=\([01]\).*/\1/p' <<<"$line"))"
}

if build_probe; then
	while read -r name java; do run_probe "$name" "$java"; done < <(agent_jdks)
else
	t_fail "level probe agent builds"; sed 's/^/# /' "$TESTTMP/probe.cc"
fi

while read -r name java; do
	run_startup "$name" "$java" tiered
	run_startup "$name" "$java" c2only -XX:-TieredCompilation
	run_startup "$name" "$java" c1only -XX:TieredStopAtLevel=1
	run_attach "$name" "$java"
	run_osr "$name" "$java" tiered
	run_osr "$name" "$java" c1only -XX:TieredStopAtLevel=1
done < <(agent_jdks)
t_done
