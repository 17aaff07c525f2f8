#!/usr/bin/env bash
# The decoder's tracing gap scan from packets (user/decode/gapscan.c)
# against libipt's query decoder, the reference it replaces for speed:
# tests/tools/decode_gapcmp scans every pt stream both ways and compares
# every gap (times, offset, IPs, kind).  The packet scan must be used on
# well-formed traces (no run left to the query decoder: TSC only, MTC,
# loss, many switches, interrupts, a small AUX buffer, no TSC) and the
# tables must be the same everywhere, also where it gives up (CYC,
# damaged PT).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
. "$(dirname "$0")/decode_lib.sh"
sim_setup
: "${TOOLS:=$BUILD/asan/tests/tools}"
GAPCMP=$TOOLS/decode_gapcmp
t_need_tool "$GAPCMP"

base=$TESTTMP/gapscan-base
"$SIM" scenario -o "$base" --threads 4 --iters 300 >/dev/null 2>&1

# cmp_gaps NAME BUNDLE WANT_FALLBACKS(0|any|some): two TAP lines
cmp_gaps() {
	local name=$1 b=$2 want=$3 fb
	"$GAPCMP" "$b" >"$b.gapcmp" 2>&1
	local rc=$?
	t_check_sh "$name: the same gaps from packets as from the query decoder" \
		'[ $rc = 0 ] && grep -q " gaps=[1-9]" "$b.gapcmp"'
	[ $rc = 0 ] || sed 's/^/# /' "$b.gapcmp" | head -8
	fb=$(sed -n 's/.* fallbacks=\([0-9]*\).*/\1/p' "$b.gapcmp" | awk '{ s += $1 } END { print s + 0 }')
	case $want in
	0) t_check "$name: every run scanned from packets (no fallback)" [ "$fb" = 0 ] ;;
	some) t_check "$name: runs it cannot follow go to the query decoder ($fb)" [ "$fb" -gt 0 ] ;;
	esac
}

variant() { # variant NAME WANT SYNTH-OPTIONS...
	local name=$1 want=$2 b
	shift 2
	b=$TESTTMP/gapscan-$(echo "$name" | tr -c 'a-z0-9' '-')
	rm -rf "$b"; cp -r "$base" "$b"
	"$SIM" synth "$b" --jit-invoke 5 "$@" >/dev/null 2>&1 || { t_fail "$name: synth"; return; }
	cmp_gaps "$name" "$b" "$want"
}

variant "2 CPUs, TSC only" 0 --cpus 2 --quantum-us 100 --seed 3
variant "3 CPUs, 20 us slices, interrupts" 0 --cpus 3 --quantum-us 20 --irq-every 2000 --seed 4
variant "MTC" 0 --cpus 2 --mtc --quantum-us 100 --seed 5
variant "MTC, loss 20%" 0 --cpus 2 --mtc --loss 20 --seed 6
variant "small AUX buffer, slow drain (truncated AUX)" 0 --cpus 2 --aux-size 16384 --drain 2 --seed 7
variant "no TSC, no return compression, 1 KiB PSB period" 0 --cpus 2 --no-tsc --no-retcomp --psb-period 1024 --seed 8
variant "CYC" some --cpus 2 --mtc --cyc --seed 9

dmg=$TESTTMP/gapscan-dmg
rm -rf "$dmg"; cp -r "$base" "$dmg"
"$SIM" synth "$dmg" --cpus 2 --jit-invoke 5 --loss 10 --seed 10 >/dev/null 2>&1
pt_mangle flip "$dmg/pt/cpu0.jpb" 1
pt_mangle scramble "$dmg/pt/cpu1.jpb" 2
cmp_gaps "flipped and scrambled PT" "$dmg" any
t_done
