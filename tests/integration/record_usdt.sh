#!/usr/bin/env bash
# USDT hotspot:compiled__method__load on JDK 17 and 25: loads are seen,
# with sane names and addresses in the target's executable memory, and
# (when the agent attaches) the same code addresses as the agent's
# CompiledMethodLoad records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record_lib.sh"
rec_setup
: "${AGENT:=$BUILD/libjpbpf-agent.so}"

for java in "$JDK17" "$JDK25"; do
	name=$(basename "$(dirname "$(dirname "$java")")")
	if [ ! -x "$java" ]; then
		for i in 1 2 3 4 5; do t_skip "$name" "not installed"; done
		continue
	fi
	rec_java "$java" Handoff 30 8
	B=$TESTTMP/usdt-$name
	agent_opt=(--agent "$AGENT")
	[ -f "$AGENT" ] || agent_opt=(--no-agent)
	"$JPBPF_PLAIN" record -p "$JPID" --no-pt -d 3 "${agent_opt[@]}" -o "$B" \
		2>"$TESTTMP/usdt.err"
	rc=$?
	t_check "$name: record exits 0" [ "$rc" = 0 ]
	t_check "$name: USDT attached" [ "$(rec_json "$B" usdt.attached)" = true ]
	"$RCHECK" usdt "$B" >"$TESTTMP/usdt.txt"
	loads=$(rec_json "$B" usdt.compiled_loads)
	echo "# $name: $loads compiled-method loads"
	t_check "$name: compiled-method loads seen ($loads)" [ "${loads:-0}" -gt 0 ]
	# Hidden classes have a suffix after '/' (JDK 17) or '+' (JDK 25):
	# Foo$$Lambda+0x0000000028004098.
	bad=$(awk '$3 !~ /^[A-Za-z0-9_\/$+]+\.[A-Za-z0-9_$<>]+$/ || $4 !~ /^\(/ || $2 == 0' \
		"$TESTTMP/usdt.txt" | head -3)
	outside=$(python3 - "/proc/$JPID/maps" "$TESTTMP/usdt.txt" <<'PY'
import sys
maps = []
for line in open(sys.argv[1]):
    f = line.split()
    if 'x' in f[1]:
        lo, hi = (int(v, 16) for v in f[0].split('-'))
        maps.append((lo, hi))
bad = [l.split()[0] for l in open(sys.argv[2])
       if not any(lo <= int(l.split()[0], 16) and
                  int(l.split()[0], 16) + int(l.split()[1]) <= hi for lo, hi in maps)]
print(' '.join(bad[:3]) if bad else '')
if not maps: print('no-maps')
PY
)
	[ $? = 0 ] || outside="(cannot read /proc/$JPID/maps)"
	t_check "$name: names well-formed, code inside executable mappings${bad:+ (bad: $bad)}${outside:+ (outside: $outside)}" \
		[ -z "$bad$outside" ]
	if [ "$(rec_meta "$B" agent.attached)" != true ]; then
		t_skip "$name: USDT loads = agent CompiledMethodLoad set" \
			"agent not attached: $(rec_meta "$B" agent.reason)"
	else
		"$RCHECK" nmethods "$B" | sort >"$TESTTMP/nm.txt"
		# The agent sees loads until recording asks it to finish; USDT
		# until the recorder stops.  HotSpot fires the probe at once but
		# posts the JVMTI event later from its service thread, so loads
		# in the last 500 ms before the finish may miss the agent (its
		# record trailed the probe by 0.1-0.8 ms median, 32 ms at most,
		# on one CPU at load 5-9; the margin was 100 ms).
		fin=$(( $(rec_meta "$B" agent.finish_ns) - 500000000 ))
		awk -v f="$fin" '$5 < f { print $1, $2 }' "$TESTTMP/usdt.txt" | sort >"$TESTTMP/us.txt"
		# Every agent load fired the probe too (a replay on attach as
		# well), so against all USDT loads the agent has nothing extra.
		only_agent=$(awk '{ print $1, $2 }' "$TESTTMP/usdt.txt" | sort |
			join -v2 - "$TESTTMP/nm.txt" | wc -l)
		only_usdt=$(join -v1 "$TESTTMP/us.txt" "$TESTTMP/nm.txt" | wc -l)
		# JVMTI's code_size spans the nmethod's whole code section, the
		# probe's size the instructions only: never larger.
		bigger=$(join "$TESTTMP/us.txt" "$TESTTMP/nm.txt" | awk '$2 > $3' | wc -l)
		echo "# $name: usdt $(wc -l <"$TESTTMP/us.txt"), agent $(wc -l <"$TESTTMP/nm.txt"), only usdt $only_usdt, only agent $only_agent"
		# How far the agent's record trails the probe, for the loads
		# after the attach (a replay trails by the time since the load).
		echo "# $name: agent record after USDT probe: $(python3 - "$TESTTMP/usdt.txt" "$TESTTMP/nm.txt" <<'PY'
import sys
us = {l.split()[0]: int(l.split()[4]) for l in open(sys.argv[1])}
nm = [(l.split()[0], int(l.split()[3])) for l in open(sys.argv[2])]
t0 = min(t for _, t in nm)
lag = sorted(t - us[a] for a, t in nm if a in us and us[a] > t0)
print("%d loads after attach, median %.1f ms, max %.1f ms" % (len(lag),
      lag[len(lag) // 2] / 1e6, lag[-1] / 1e6) if lag else "no load after attach")
PY
)"
		t_check "$name: USDT loads = agent CompiledMethodLoad set (same addresses, USDT size <= agent size)" \
			[ "$only_agent" = 0 -a "$only_usdt" = 0 -a "$bigger" = 0 ]
	fi
	rec_stop "$JPID"
done
t_done
