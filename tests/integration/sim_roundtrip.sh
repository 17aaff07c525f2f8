#!/usr/bin/env bash
# libipt round trip: for each packet feature the simulator uses, decoding
# the synthesized pt/cpuN streams with libipt's instruction-flow and block
# decoders (over an image built from the bundle's jvm stream) reproduces
# the simulator's instruction truth exactly.  Truth: a hand-made scenario
# (loops, calls, virtual calls with 3 receivers, an exception across two
# frames, a native call) on 3 threads.  With a tiny code cache, code is
# flushed, unloaded and its addresses reused: verify then picks each
# address's code by the decoder's time (TSC) from jvm_nmethod_load/unload.
# Timing packets: TSC, MTC+TMA, CYC.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

base=$TESTTMP/sim-rt
"$SIM" scenario -o "$base" --threads 3 --iters 150 2>"$TESTTMP/sc.err"
t_check "scenario writes a truth bundle" [ -f "$base/truth.jpb" ]

# name|synth options|checks (shell conditions over $out and $b)
run() {
	local name=$1 opts=$2 b=$TESTTMP/sim-rt-$1 out=$TESTTMP/sim-rt-$1.out
	rm -rf "$b"; cp -r "$base" "$b"
	# shellcheck disable=SC2086
	if ! "$SIM" synth "$b" $opts 2>"$out.synth"; then
		t_fail "$name: synth $opts"; sed 's/^/# /' "$out.synth"; return
	fi
	if sim_verify "$b" "$out"; then
		t_ok "$name: insn and block decoders reproduce the truth ($opts)"
	else
		t_fail "$name: insn and block decoders reproduce the truth ($opts)"
		sed 's/^/# /' "$out" "$out.err"
	fi
	t_check "$name: no resyncs (the truth is consistent)" [ "$(sim_meta "$b" sim.resyncs)" = 0 ]
}

run interp "--cpus 1 --no-jit --seed 1"
out=$TESTTMP/sim-rt-interp.out
t_check "interp: TIPs and TNTs present" [ "$(sim_field "$out" tip)" -gt 1000 -a "$(sim_field "$out" tnt)" -gt 100 ]
t_check "interp: IP compression 16 and 32 bits used" \
	[ "$(sim_field "$out" ip16)" -gt 0 -a "$(sim_field "$out" ip32)" -gt 0 ]
t_check "interp: PSB+ with TSC, CBR, MODE.Exec" \
	[ "$(sim_field "$out" psb)" -gt 1 -a "$(sim_field "$out" cbr)" -gt 1 -a "$(sim_field "$out" tsc)" -gt 1 -a "$(sim_field "$out" mode)" -gt 1 ]
t_check "interp: runtime calls leave and re-enter (PGD/PGE)" \
	[ "$(sim_field "$out" pge)" -gt 10 -a "$(sim_field "$out" pgd)" -gt 10 ]

run jit "--cpus 1 --jit-invoke 5 --jit-backedge 20 --seed 2"
b=$TESTTMP/sim-rt-jit
t_check "jit: methods were compiled" [ "$(sim_meta "$b" sim.nmethods)" -gt 2 ]
t_check "jit: return compression used" [ "$(sim_meta "$b" sim.compressed_returns)" -gt 0 ]
t_check "jit: an uncommon trap deoptimized" [ "$(sim_meta "$b" sim.deopts)" -gt 0 ]

run noretcomp "--cpus 1 --jit-invoke 5 --no-retcomp --seed 3"
t_check "noretcomp: no compressed return" \
	[ "$(sim_meta "$TESTTMP/sim-rt-noretcomp" sim.compressed_returns)" = 0 ]

run psb "--cpus 3 --quantum-us 20 --psb-period 256 --jit-invoke 5 --seed 4"
out=$TESTTMP/sim-rt-psb.out
t_check "psb: frequent PSB+ and context switches (async FUP+PGD)" \
	[ "$(sim_field "$out" psb)" -gt 100 -a "$(sim_field "$out" fup)" -gt "$(sim_field "$out" psb)" ]

run notsc "--cpus 2 --no-tsc --jit-invoke 5 --seed 5"
t_check "notsc: no TSC packet" [ "$(sim_field "$TESTTMP/sim-rt-notsc.out" tsc)" = 0 ]

run irq "--cpus 2 --irq-every 150 --jit-invoke 5 --seed 7"
t_check "irq: interrupts left and re-entered traced code mid-codelet" \
	[ "$(sim_meta "$TESTTMP/sim-rt-irq" sim.interrupts)" -gt 100 ]

run codecache "--cpus 3 --quantum-us 20 --jit-invoke 5 --code-cache 384 --seed 6"
b=$TESTTMP/sim-rt-codecache
t_check "codecache: code was unloaded and its addresses reused" \
	[ "$("$JPBPF" info "$b" --json 2>/dev/null | jq .jvm.compiled_unloads)" -gt 5 -a \
	  "$(sim_meta "$b" sim.code_reuses)" -gt 0 ]

run mtc "--mtc --cpus 2 --quantum-us 20 --jit-invoke 5 --code-cache 384 --seed 9"
out=$TESTTMP/sim-rt-mtc.out
t_check "mtc: MTC packets, and a TMA after every TSC" \
	[ "$(sim_field "$out" mtc)" -gt 100 -a "$(sim_field "$out" tma)" = "$(sim_field "$out" tsc)" ]
t_check "mtc: meta.json pt.config says so" \
	[ "$(jq -r .pt.config.mtc "$TESTTMP/sim-rt-mtc/meta.json")" = 1 ]

run cyc "--cyc --mtc --cpus 2 --quantum-us 20 --jit-invoke 5 --irq-every 200 --loss 5 --seed 4"
out=$TESTTMP/sim-rt-cyc.out
t_check "cyc: CYC packets (with MTC, interrupts and loss), one before most TIPs" \
	[ "$(sim_field "$out" cyc)" -gt "$(( $(sim_field "$out" tip) / 2 ))" ]
t_check "cyc: meta.json pt.config says cyc, threshold 0" \
	[ "$(jq -c '.pt.config | [.cyc, .cyc_thresh]' "$TESTTMP/sim-rt-cyc/meta.json")" = "[true,0]" ]

# On-stack replacement: loops compiled by their back-edge counter move
# their interpreted frame into the code at the loop head (runtime call,
# indirect jump into the nmethod), with loss and 2 CPUs.
run osr "--osr --jit-backedge 20 --jit-invoke 100000 --cpus 2 --quantum-us 30 --loss 4 --seed 6"
t_check "osr: frames entered compiled code at a back edge" \
	[ "$(sim_meta "$TESTTMP/sim-rt-osr" sim.osr_entries)" -gt 0 -a \
	  "$(sim_meta "$TESTTMP/sim-rt-osr" sim.nmethods)" -gt 0 ]
echo "# osr: $(sim_meta "$TESTTMP/sim-rt-osr" sim.osr_entries) OSR entries, $(sim_meta "$TESTTMP/sim-rt-osr" sim.nmethods) nmethods"

run all "--cpus 3 --quantum-us 15 --jit-invoke 4 --code-cache 384 --irq-every 120 --loss 6 --psb-period 512 --seed 8"
t_check "all: loss, reuse and interrupts together" \
	[ "$(sim_meta "$TESTTMP/sim-rt-all" sim.code_reuses)" -gt 0 -a \
	  "$(sim_meta "$TESTTMP/sim-rt-all" sim.interrupts)" -gt 0 -a \
	  "$(sim_meta "$TESTTMP/sim-rt-all" sim.lost_bytecodes)" -gt 0 ]

t_done
