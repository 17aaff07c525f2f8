#!/usr/bin/env bash
# jpbpf-sim's command line: help, usage errors (exit 2) and bad input
# (exit 1 with a one-line message).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

t_expect_exit 0 "--help" "$SIM" --help
t_expect_exit 2 "no command" "$SIM"
t_expect_exit 2 "unknown command" "$SIM" frobnicate
t_expect_exit 2 "synth without a directory" "$SIM" synth
t_expect_exit 2 "synth with a bad number" "$SIM" synth "$TESTTMP" --cpus many
t_expect_exit 2 "synth --cpus 0" "$SIM" synth "$TESTTMP" --cpus 0
t_expect_exit 2 "synth --loss 120" "$SIM" synth "$TESTTMP" --loss 120
t_expect_exit 2 "--loss with --aux-size" "$SIM" synth "$TESTTMP" --loss 5 --aux-size 4096
t_expect_exit 1 "synth on a missing directory" "$SIM" synth "$TESTTMP/nope"
mkdir -p "$TESTTMP/empty-bundle"
echo '{}' >"$TESTTMP/empty-bundle/meta.json"
t_expect_exit 1 "synth on a bundle without truth" "$SIM" synth "$TESTTMP/empty-bundle"
"$SIM" synth "$TESTTMP/empty-bundle" 2>"$TESTTMP/err.txt"
t_check "... says which stream is missing, in one line" \
	[ "$(grep -c truth "$TESTTMP/err.txt")" = 1 -a "$(wc -l <"$TESTTMP/err.txt")" = 1 ]
# A truth whose events do not match its methods' bytecode is refused.
b=$TESTTMP/bad-truth
"$SIM" scenario -o "$b" --iters 2 >/dev/null 2>&1
python3 - "$b/truth.jpb" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
# flip the last byte of the file (inside the last events payload) and
# recompute nothing: the record CRC catches it
d[-9] ^= 0xff
open(p, "wb").write(d)
PY
t_expect_exit 1 "synth on a corrupt truth" "$SIM" synth "$b"
# A second synth with fewer CPUs replaces the first one's streams.
b=$TESTTMP/resynth
"$SIM" scenario -o "$b" --iters 20 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 4 2>/dev/null && "$SIM" synth "$b" --cpus 2 2>/dev/null
t_check "re-synth on 2 CPUs leaves no pt/cpu2, pt/cpu3" \
	[ -f "$b/pt/cpu1.jpb" -a ! -e "$b/pt/cpu2.jpb" -a ! -e "$b/pt/cpu3.jpb" -a ! -e "$b/sim/itruth/cpu2.jpb" ]
t_check "... and still decodes exactly" sim_verify "$b" "$b.out"
"$SIM" synth "$b" --no-itruth 2>/dev/null
t_expect_exit 1 "verify without instruction truth fails" "$SIM" verify "$b"
t_expect_exit 2 "scenario without -o" "$SIM" scenario
t_expect_exit 2 "truth without a command" "$SIM" truth -o "$TESTTMP/x"
t_expect_exit 2 "verify without a directory" "$SIM" verify
t_done
