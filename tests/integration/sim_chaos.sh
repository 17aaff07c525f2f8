#!/usr/bin/env bash
# Robustness: truth that follows no program (random methods, bcis and
# event kinds, as a truth with lost events might look) must still give a
# bundle whose every stream decodes exactly: the simulator leaves traced
# code where it cannot follow, never crashes, never loops.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

for seed in 1 2 3 4 5 6; do
	b=$TESTTMP/chaos-$seed
	"$SIM" scenario -o "$b" --threads 2 --iters 40 --chaos $seed 2>/dev/null
	opts="--jit-invoke 3 --jit-backedge 5 --cpus 2 --quantum-us 5 --seed $seed"
	[ $((seed % 2)) = 0 ] && opts+=" --loss 10"
	[ $((seed % 3)) = 0 ] && opts+=" --code-cache 256"
	# shellcheck disable=SC2086
	if timeout 120 "$SIM" synth "$b" $opts 2>"$b.err"; then
		t_ok "chaos $seed: synth succeeds ($opts)"
	else
		t_fail "chaos $seed: synth succeeds ($opts)"; sed 's/^/# /' "$b.err" | tail -5
		continue
	fi
	t_check "chaos $seed: the model left traced code where it could not follow" \
		[ "$(sim_meta "$b" sim.resyncs)" -gt 0 ]
	t_check "chaos $seed: every stream decodes exactly" sim_verify "$b" "$b.out"
done
t_done
