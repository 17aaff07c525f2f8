#!/usr/bin/env bash
# The decoded output must not depend on -j, also with MTC timing: libipt's
# block cache (per worker section cache) lets a cached block run further
# than the same block decoded afresh, and libipt's time is read once per
# block, so with MTC's fine time the events' times depended on which
# chunks a worker had decoded before (which changes with -j and from run
# to run).  Every chunk now starts with the block caches dropped.  A real
# JVM's truth (SimLoop, JDK 17) on 3 simulated CPUs with MTC, loss and a
# jittered BPF clock, in 16 KiB chunks: -j 1, three runs of -j 2, -j 8.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup
top=$(cd "$(dirname "$0")/../.." && pwd)
jdk=/usr/lib/jvm/java-17-openjdk-amd64
if [ ! -x "$jdk/bin/javac" ] || [ ! -f "${AGENT:-}" ]; then
	t_skip "-j independence with MTC" "no JDK 17 or agent (AGENT=${AGENT:-})"
	t_done
	exit 0
fi
cls=$TESTTMP/jmtc-cls
mkdir -p "$cls"
"$jdk/bin/javac" -d "$cls" "$top/tests/workloads/SimLoop.java" 2>/dev/null
b=$TESTTMP/jmtc
rm -rf "$b"
"$SIM" truth -o "$b" --agent "$AGENT" -- "$jdk/bin/java" -cp "$cls" SimLoop 4000 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 3 --seed 4 --mtc --loss 10 --jitter 2000 --quantum-us 200 >/dev/null 2>&1
t_check "SimLoop bundle with MTC made" [ -f "$b/pt/cpu0.jpb" ]

hash_of() { # hash_of JOBS: decodes, prints the hash of decoded/
	"$JPBPF" decode "$b" --no-flow -q -j "$1" --chunk-size 16384 >"$b.j$1.out" 2>&1 &&
		cat "$b"/decoded/*.jpb | md5sum | cut -d' ' -f1
}
one=$(hash_of 1)
t_check "-j 1 decodes" [ -n "$one" ]
same=1
for j in 2 2 2 8; do
	[ "$(hash_of $j)" = "$one" ] || same=0
done
t_check "decoded/ byte-identical for -j 1, 2 (3 runs) and 8 with MTC ($(grep -o '[0-9]* chunks' "$b.j1.out"))" \
	[ $same = 1 ]
t_done
