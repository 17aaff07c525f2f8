#!/usr/bin/env bash
# The decoder finds HotSpot's locals-zeroing loop (DECODER.md, "Entry
# locals") in the zerolocals method entries of real JVMs, JDK 17 and 25,
# and in no other method entry: an agent-only bundle (no PT needed),
# loaded as `jpbpf decode` loads it (tests/tools/decode_entryloop).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
TOOL=$TOOLS/decode_entryloop
t_need_tool "$TOOL"
[ -f "$AGENT" ] || { echo "Bail out! $AGENT not built"; exit 1; }

run_jdk() {
	local name=$1 java=$2 out=$TESTTMP/entryloop-$1
	if ! "$java" -agentpath:"$AGENT"=out="$out" -version >"$out.stdout" 2>&1 ||
		! "$TOOL" "$out" >"$out.loops" 2>"$out.err"; then
		t_fail "$name: agent-only bundle loaded"; sed 's/^/# /' "$out.stdout" "$out.err"
		return
	fi
	sed 's/^/# /' "$out.loops" | grep -E 'zerolocals|native'
	local zl kind
	for kind in zerolocals zerolocals_synchronized; do
		zl=$(grep -P "^method entry point \(kind = $kind\)\t" "$out.loops")
		# jg loop (7f f7) early in the codelet, not the type-profiling
		# loop's jns further on (+0x13f on JDK 25, +0x160 on JDK 17)
		t_check "$name: $kind entry: loop found, a jg -9 before +0x100" \
			python3 -c 'import sys; f=sys.argv[1].split("\t")
sys.exit(not (len(f) == 3 and f[1] == "zerolocals" and f[2].startswith("loop +0x") and
     f[2].endswith(" 7ff7") and int(f[2].split()[1], 16) < 0x100))' "$zl"
	done
	t_check "$name: native entries: no loop" \
		[ "$(grep -c 'kind = native' "$out.loops")" -ge 2 -a \
		  "$(grep 'kind = native' "$out.loops" | grep -vc $'\tnone$')" = 0 ]
	t_check "$name: no other method entry has a loop" \
		[ "$(grep -v 'kind = zerolocals' "$out.loops" | grep -vc $'\tnone$')" = 0 ]
}

n=0
while read -r name java; do
	run_jdk "$name" "$java"
	n=$((n + 1))
done < <(agent_jdks)
[ $n -gt 0 ] || t_skip "real JVM entry loops" "no JDK 17 or 25 installed"
t_done
