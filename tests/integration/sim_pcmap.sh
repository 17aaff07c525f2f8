#!/usr/bin/env bash
# jpbpf-sim --pcmap safepoints: HotSpot's pc maps without DebugNonSafepoints
# (only calls and safepoint polls are mapped).  The code and its trace are
# those of the default maps; only the maps shrink, every compiled method is
# flagged coarse, and decoding then reports fewer bytecodes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
: "${JPBPF:=$BUILD/jpbpf}"
: "${TOOLS:=$BUILD/tests/tools}"
t_need_tool "$TOOLS/agent_check"

t_expect_exit 2 "--pcmap with a bad value" "$SIM" synth "$TESTTMP" --pcmap some

full=$TESTTMP/full
coarse=$TESTTMP/coarse
"$SIM" scenario -o "$full" --iters 300 >/dev/null 2>&1
cp -r "$full" "$coarse"
opts=(--cpus 2 --jit-invoke 40 --jit-backedge 400 --seed 3)
"$SIM" synth "$full" "${opts[@]}" >/dev/null 2>&1
"$SIM" synth "$coarse" "${opts[@]}" --pcmap safepoints >/dev/null 2>&1
t_check "both synthesise" [ -f "$full/pt/cpu0.jpb" -a -f "$coarse/pt/cpu0.jpb" ]
t_check "the trace is the same: only the maps differ" \
	cmp -s "$full/pt/cpu0.jpb" "$coarse/pt/cpu0.jpb"

jvm() { "$JPBPF" info "$1" --json | jq -r ".jvm.$2"; }
n=$(jvm "$full" compiled_methods)
t_check "methods were compiled ($n)" [ "${n:-0}" -gt 0 ]
t_check "default maps: none coarse, the bundle says full maps" \
	[ "$(jvm "$full" coarse_methods)" = 0 -a "$(jvm "$full" coarse_pcmaps)" = false ]
t_check "safepoint maps: every method coarse, the bundle says so" \
	[ "$(jvm "$coarse" coarse_methods)" = "$n" -a "$(jvm "$coarse" coarse_pcmaps)" = true ]

pcs() { "$TOOLS/agent_check" summary "$1" 2>/dev/null | jq -r .pcs; }
pf=$(pcs "$full")
pc=$(pcs "$coarse")
t_check "coarse maps keep some pcs, fewer than full ones ($pc of $pf)" \
	[ "${pc:-0}" -gt 0 -a "${pc:-0}" -lt "${pf:-0}" ]

decoded() {
	"$JPBPF" decode -j 1 "$1" >"$1.out" 2>&1 &&
		"$JPBPF" eval "$1" --json | jq -r .overall.observed
}
of=$(decoded "$full")
oc=$(decoded "$coarse")
t_check "decode's summary counts the coarse maps" \
	grep -q "^image: $n compiled methods (0 without pc map, $n with coarse pc maps" "$coarse.out"
t_check "... and none in the default bundle" \
	grep -q "^image: $n compiled methods (0 without pc map, 0 with coarse pc maps" "$full.out"
t_check "fewer bytecodes decoded from coarse maps ($oc of $of)" \
	[ "${oc:-0}" -gt 0 -a "${oc:-0}" -lt "${of:-0}" ]
t_done
