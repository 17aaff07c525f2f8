#!/usr/bin/env bash
# The Java program model (user/java/) on real class files:
#  - tests/workloads/Model*.java compiled with javac: every method's
#    instruction boundaries, opcodes, branch and switch targets, constant
#    pool operands, exception tables and line numbers against javap;
#  - call-site candidates of the Model workloads (test_java_model --model);
#  - truncation and bit flips of the Model classes (never a crash, ASan);
#  - a few hundred JDK classes (java.base of JDK 17 and 25) parse, give
#    valid CFGs and resolvable call sites.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
san=${SAN_BUILD:-$(dirname "$JPBPF")}
drv=${TOOLS:-$san/tests/tools}/java_model
jdk17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
jdk25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
export CMOCKA_MESSAGE_OUTPUT=TAP

if [ ! -x "$drv" ]; then
	t_skip "java model" "driver $drv not built (make unit-tests)"
	t_done
	exit 0
fi
if [ ! -x "$jdk17/bin/javac" ]; then
	t_skip "java model" "no JDK 17 at $jdk17"
	t_done
	exit 0
fi

# javap -c -l -p -s output -> the driver's --dump format, one fact a line:
#   m<K> method NAME DESC | m<K> insn BCI MNEMONIC [TARGET] [#CP] [SWITCH]
#   m<K> exc N FROM TO HANDLER TYPE | m<K> line PC LINE
# K counts the methods in class file order, as javap lists them.
javap_facts() {
	"$jdk17/bin/javap" -c -l -p -s "$1" | awk '
	function flush_switch() {
		if (sw != "") { print sw cases " default:" def; sw = "" }
	}
	/^([^ ].* )?(class|interface) / {
		for (i = 1; i <= NF; i++)
			if ($i == "class" || $i == "interface") {
				cls = $(i + 1); sub(/<.*/, "", cls); break
			}
		k = -1; next
	}
	/^  [^ ]/ { hdr = $0; next }
	/^    descriptor: \(/ {
		k++; x = 0; sect = ""
		name = hdr
		if (name ~ /^  static \{\};/) name = "<clinit>"
		else {
			sub(/\(.*/, "", name); n = split(name, a, " ")
			name = a[n]; if (name == cls) name = "<init>"
		}
		print "m" k " method " name " " $2; next
	}
	/^    [A-Za-z][A-Za-z ]*:/ {
		flush_switch(); sect = $0; sub(/^ +/, "", sect); sub(/:.*/, "", sect)
		next
	}
	sect == "Code" && sw != "" {
		if ($1 == "}") { flush_switch(); next }
		t = $2
		if ($1 == "default:") def = t
		else { key = $1; sub(/:/, "", key); cases = cases " " key ":" t }
		next
	}
	sect == "Code" && /^ +[0-9]+: [a-z]/ {
		bci = $1; sub(/:/, "", bci); line = "m" k " insn " bci " " $2
		if ($2 ~ /^(if|goto|jsr)/) line = line " " $3
		if ($3 ~ /^#/) { cp = $3; gsub(/[^0-9]/, "", cp); line = line " #" cp }
		if ($2 == "tableswitch" || $2 == "lookupswitch") {
			sw = line; cases = ""; next
		}
		print line; next
	}
	sect == "Exception table" && $1 ~ /^[0-9]+$/ {
		type = ($4 == "any") ? "any" : $5
		print "m" k " exc " x++ " " $1 " " $2 " " $3 " " type; next
	}
	sect == "LineNumberTable" && $1 == "line" {
		l = $2; sub(/:/, "", l); print "m" k " line " $3 " " l; next
	}'
}

model=$TESTTMP/model
mkdir -p "$model"
if ! "$jdk17/bin/javac" -g -d "$model" "$top"/tests/workloads/Model*.java \
	2>"$TESTTMP/javac.err"; then
	t_fail "javac Model*.java"
	sed 's/^/# /' "$TESTTMP/javac.err"
	t_done
	exit 0
fi
t_ok "javac Model*.java"

for cls in "$model"/*.class; do
	b=$(basename "$cls")
	javap_facts "$cls" | sort >"$TESTTMP/want.$b"
	"$drv" --dump "$cls" 2>"$TESTTMP/err.$b" | sort >"$TESTTMP/got.$b"
	n=$(grep -c ' insn ' "$TESTTMP/want.$b")
	if [ "$n" -gt 0 ] && diff -u "$TESTTMP/want.$b" "$TESTTMP/got.$b" \
		>"$TESTTMP/diff.$b"; then
		t_ok "$b: $n instructions, exception tables, lines match javap"
	else
		t_fail "$b: differs from javap ($n instructions)"
		head -40 "$TESTTMP/diff.$b" "$TESTTMP/err.$b" | sed 's/^/# /'
	fi
done

run_driver() {
	local what=$1; shift
	if "$drv" "$@" >"$TESTTMP/drv.out" 2>&1; then
		t_ok "$what"
		grep '^# [0-9]' "$TESTTMP/drv.out"
	else
		t_fail "$what"
		grep -v '^ok' "$TESTTMP/drv.out" | head -30 | sed 's/^/# /'
	fi
}

run_driver "Model call sites: virtual, interface, super, private, lambdas" \
	--model "$model"
run_driver "Model classes: CFG invariants, truncation and bit flips" \
	--fuzz "$model"/*.class

# JDK 17: java.base's java.lang and java.util, from the jmod.
if [ -x "$jdk17/bin/jmod" ] && [ -f "$jdk17/jmods/java.base.jmod" ]; then
	mkdir -p "$TESTTMP/jdk17"
	"$jdk17/bin/jmod" extract --dir "$TESTTMP/jdk17" \
		"$jdk17/jmods/java.base.jmod"
	set -- "$TESTTMP"/jdk17/classes/java/lang/*.class \
		"$TESTTMP"/jdk17/classes/java/util/*.class
	run_driver "JDK 17 java.base: $# classes parse, CFGs, call sites" "$@"
else
	t_skip "JDK 17 java.base classes" "no jmods in $jdk17"
fi

# JDK 25 (class file version 69), from the runtime image.
if [ -x "$jdk25/bin/jimage" ] && [ -f "$jdk25/lib/modules" ]; then
	mkdir -p "$TESTTMP/jdk25"
	"$jdk25/bin/jimage" extract --dir "$TESTTMP/jdk25" \
		--include 'regex:/java.base/java/(lang|util)/[^/]*\.class' \
		"$jdk25/lib/modules"
	set -- $(find "$TESTTMP/jdk25" -name '*.class' | sort)
	run_driver "JDK 25 java.base: $# classes parse, CFGs, call sites" "$@"
else
	t_skip "JDK 25 java.base classes" "no runtime image in $jdk25"
fi
t_done
