#!/usr/bin/env bash
# Loss: --loss PCT hits its target within 1 point, every loss shows in the
# trace as OVF and in the pt stream as a truncated AUX record, the
# decoders resume exactly where the truth says, and sim/lost accounts for
# exactly the lost bytecodes.  The AUX buffer model (--aux-size/--drain)
# loses data the same way when the drain is too slow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

base=$TESTTMP/sim-loss
"$SIM" scenario -o "$base" --threads 3 --iters 200 >/dev/null 2>&1

# Sum of the counts in sim/lost (u64 at offset 16 of each 24-byte payload).
lost_records() {
	"$JPBPF" info "$1" --json 2>/dev/null | jq -r '.streams[]? | select(.name=="sim/lost") | .records' 2>/dev/null
}

for pct in 2 10 25; do
	b=$TESTTMP/sim-loss-$pct
	rm -rf "$b"; cp -r "$base" "$b"
	"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --loss $pct --seed $pct 2>/dev/null
	got=$(sim_meta "$b" sim.lost_pct)
	t_check "--loss $pct: lost $got% of the bytecodes (within 1 point)" \
		awk -v g="$got" -v t=$pct 'BEGIN { d = g - t; exit !(d <= 1 && d >= -1) }'
	out=$TESTTMP/sim-loss-$pct.out
	t_check "--loss $pct: decoders match the truth around every gap" sim_verify "$b" "$out"
	t_check "--loss $pct: OVF packets seen and reported by the decoder" \
		[ "$(sim_field "$out" ovf)" -gt 0 -a "$(sed -n 's/.* \([0-9]*\) overflows.*/\1/p' "$out")" -gt 0 ]
	lostbc=$(sim_meta "$b" sim.lost_bytecodes)
	sum=$(python3 - "$b" <<'PY'
import struct, sys
d = open(sys.argv[1] + "/sim/lost.jpb", "rb").read()
pos, total = 16, 0
while pos + 24 <= len(d):
    typ, flags, size = struct.unpack_from("<HHI", d, pos)
    if typ == 0x04f1:
        total += struct.unpack_from("<Q", d, pos + 24 + 16)[0]
    pos += 24 + ((size + 7) & ~7)
print(total)
PY
)
	t_check "--loss $pct: sim/lost ranges cover exactly the $lostbc lost bytecodes" [ "$sum" = "$lostbc" ]
	t_check "--loss $pct: truncated AUX records and loss records in pt/cpu*" \
		[ "$("$JPBPF" info "$b" 2>/dev/null | awk '$2 == "loss" { n += $1 } END { print n + 0 }')" -gt 0 ]
done

b=$TESTTMP/sim-loss-buf
rm -rf "$b"; cp -r "$base" "$b"
"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --aux-size 4096 --drain 60 --seed 9 2>/dev/null
t_check "buffer model: a slow drain loses data" [ "$(sim_meta "$b" sim.lost_bytecodes)" -gt 0 ]
t_check "buffer model: decoders match the truth around every gap" sim_verify "$b" "$b.out"
t_check "buffer model: the trace resumes after overflows (OVF)" [ "$(sim_field "$b.out" ovf)" -gt 0 ]
b2=$TESTTMP/sim-loss-fast
rm -rf "$b2"; cp -r "$base" "$b2"
"$SIM" synth "$b2" --cpus 2 --jit-invoke 5 --aux-size 1048576 --drain 2000 --seed 9 2>/dev/null
t_check "buffer model: a big buffer and fast drain lose nothing" [ "$(sim_meta "$b2" sim.lost_bytecodes)" = 0 ]
t_done
