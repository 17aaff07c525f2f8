#!/usr/bin/env bash
# Ground-truth mode on a small deterministic program: the recorded bytecode
# sequence of each method equals the one written down from `javap -c
# TruthSmall` (tests/workloads/TruthSmall.java).  Also: truth mode is
# refused on attach (SingleStep is start-up only).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent_lib.sh"
agent_setup

declare -A op=( [iconst_m1]=2 [iconst_0]=3 [iload_0]=26 [iload_1]=27
	[iload_2]=28 [istore_1]=60 [istore_2]=61 [astore_2]=77 [iadd]=96
	[idiv]=108 [iinc]=132 [if_icmpge]=162 [goto]=167 [ireturn]=172
	[invokestatic]=184 )

# expect "bci:mnemonic ..." -> "bci:opcode ..." as agent_check prints.
expect() {
	local w out=""
	for w in "$@"; do
		case $w in
		*:*) out+="${w%%:*}:${op[${w#*:}]} " ;;
		*) out+="$w " ;;
		esac
	done
	echo "${out% }"
}

# javap -c: add(II)I is   0 iload_0  1 iload_1  2 iadd  3 ireturn
add_seq=$(expect 0:iload_0 1:iload_1 2:iadd 3:ireturn EXIT)
# loop(3): 0 iconst_0 1 istore_1 2 iconst_0 3 istore_2, then per iteration
# 4 iload_2 5 iload_0 6 if_icmpge 9 iload_1 10 iload_2 11 invokestatic
# 14 istore_1 15 iinc 18 goto, the exit test, 21 iload_1 22 ireturn.
iter="4:iload_2 5:iload_0 6:if_icmpge 9:iload_1 10:iload_2 11:invokestatic 14:istore_1 15:iinc 18:goto"
loop_seq=$(expect 0:iconst_0 1:istore_1 2:iconst_0 3:istore_2 $iter $iter $iter \
	4:iload_2 5:iload_0 6:if_icmpge 21:iload_1 22:ireturn EXIT)
# safeDiv(1, 0): 0 iload_0 1 iload_1 2 idiv throws ArithmeticException,
# caught by the handler at 4: 4 astore_2 5 iconst_m1 6 ireturn.
div_seq=$(expect 0:iload_0 1:iload_1 2:idiv THROW@2 CATCH@4 4:astore_2 5:iconst_m1 6:ireturn EXIT)

run_jdk() {
	local name=$1 java=$2 out=$TESTTMP/truth-$1
	if ! "$java" -agentpath:"$AGENT"=out="$out",truth -cp "$WL" TruthSmall \
		>"$out.stdout" 2>"$out.stderr"; then
		t_fail "$name: JVM in truth mode exits 0"; sed 's/^/# /' "$out.stderr"
		return
	fi
	t_check "$name: program output intact" grep -qx "result 2" "$out.stdout"
	local got
	got=$("$CHECK" truth "$out" 'LTruthSmall;' add 2>&1)
	t_check "$name: add() ran 3 times, exactly the javap sequence" \
		[ "$got" = "$(printf '%s\n%s\n%s' "$add_seq" "$add_seq" "$add_seq")" ]
	[ "$got" = "$(printf '%s\n%s\n%s' "$add_seq" "$add_seq" "$add_seq")" ] ||
		{ echo "# got: $got"; echo "# want: $add_seq (x3)"; }
	got=$("$CHECK" truth "$out" 'LTruthSmall;' loop 2>&1)
	t_check "$name: loop(3) is exactly the javap sequence" [ "$got" = "$loop_seq" ]
	[ "$got" = "$loop_seq" ] || { echo "# got:  $got"; echo "# want: $loop_seq"; }
	got=$("$CHECK" truth "$out" 'LTruthSmall;' safeDiv 2>&1)
	t_check "$name: safeDiv(1,0) throws at 2, handler at 4" [ "$got" = "$div_seq" ]
	[ "$got" = "$div_seq" ] || { echo "# got:  $got"; echo "# want: $div_seq"; }
	"$CHECK" truth_check "$out" >"$out.tc" 2>/dev/null
	t_check "$name: each thread's records are contiguous (seq)" \
		[ "$(agent_json "$out.tc" bad_seq)" = 0 -a "$(agent_json "$out.tc" threads)" -ge 1 ]
	t_check "$name: every event's method described before use" \
		[ "$(agent_json "$out.tc" unknown_method)" = 0 ]
	t_check "$name: every step's opcode is the method's bytecode at bci" \
		[ "$(agent_json "$out.tc" bad_opcode)" = 0 -a "$(agent_json "$out.tc" bad_kind)" = 0 ]
	if [ -x "$JPBPF_PLAIN" ]; then
		"$JPBPF_PLAIN" info "$out" --json >"$out.info" 2>/dev/null
		local n
		n=$(agent_json "$out.info" truth.bytecodes)
		t_check "$name: info truth.bytecodes ($n) > 1000" [ "${n:-0}" -gt 1000 ]
		n=$(agent_json "$out.info" truth.threads)
		t_check "$name: info truth.threads ($n) >= 1" [ "${n:-0}" -ge 1 ]
		t_check "$name: info jvm.truth flag" [ "$(agent_json "$out.info" jvm.truth)" = True ]
	else
		t_skip "$name: jpbpf info truth" "no $JPBPF_PLAIN"
	fi
}

while read -r name java; do
	run_jdk "$name" "$java"
done < <(agent_jdks)
[ -z "$(agent_jdks)" ] && t_skip "truth mode" "no JDK found"
t_done
