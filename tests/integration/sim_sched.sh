#!/usr/bin/env bash
# Scheduling: threads on N simulated CPUs with preemption, blocking and
# migration; one PT stream per CPU, each decoding exactly; the sched
# stream's switches carry the requested clock jitter.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

b=$TESTTMP/sim-sched
"$SIM" scenario -o "$b" --threads 5 --iters 150 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 4 --quantum-us 10 --block-prob 0.3 --jit-invoke 5 \
	--jitter 2000 --seed 11 2>"$b.err"
t_check "synth on 4 CPUs" [ $? -eq 0 ]
n=0
for c in 0 1 2 3; do [ -f "$b/pt/cpu$c.jpb" ] && n=$((n + 1)); done
t_check "one pt stream per CPU ($n of 4)" [ $n = 4 ]
t_check "every CPU's stream decodes exactly" sim_verify "$b" "$b.out"
t_check "many context switches" [ "$(sim_field "$b.out" switches)" -gt 40 ]
t_check "threads migrate between CPUs" [ "$(sim_field "$b.out" migrating_threads)" -ge 3 ]
info=$("$JPBPF" info "$b" 2>/dev/null)
t_check "thread lifecycle in sched: 4 forks, 5 exits, 5 traced tids" \
	[ "$(sed -n 's/^sched.forks: //p' <<<"$info")" = 4 -a \
	  "$(sed -n 's/^sched.exits: //p' <<<"$info")" = 5 -a \
	  "$(sed -n 's/^sched.tids: //p' <<<"$info")" = 5 ]

# Jitter: the same run without jitter has the same switches at times
# that differ by at most 2000 ns, and not all equal.
b0=$TESTTMP/sim-sched0
"$SIM" scenario -o "$b0" --threads 5 --iters 150 >/dev/null 2>&1
"$SIM" synth "$b0" --cpus 4 --quantum-us 10 --block-prob 0.3 --jit-invoke 5 \
	--seed 11 2>/dev/null
times() {
	python3 - "$1/sched.jpb" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
pos = 16
while pos + 24 <= len(d):
    typ, flags, size, t = struct.unpack_from("<HHIQ", d, pos)
    if typ == 0x0201:
        print(t)
    pos += 24 + ((size + 7) & ~7)
PY
}
paste <(times "$b") <(times "$b0") >"$TESTTMP/jit.txt"
t_check "jitter: same number of switches" \
	[ "$(wc -l <"$TESTTMP/jit.txt")" -gt 40 -a "$(awk "NF != 2" "$TESTTMP/jit.txt" | wc -l)" = 0 ]
t_check "jitter: every switch within 2000 ns of its PT-clock time, some moved" \
	awk '{ d = $1 - $2; if (d > 2000 || d < -2000) bad = 1; if (d != 0) moved++ } END { exit bad || !moved }' "$TESTTMP/jit.txt"
t_done
