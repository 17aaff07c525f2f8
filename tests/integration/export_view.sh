#!/usr/bin/env bash
# What a person sees: the folded stacks and the Chrome trace of a
# simulated bundle, loaded into speedscope (npm package, installed into a
# cache dir under the build dir) in headless Chromium.  From the page's
# DOM (the Sandwich view's symbol table): every frame name of the export
# is listed and no import error is shown; a decoy profile of other
# frames, the negative control, fails the same name check.  Skips, saying
# why, without Chromium or npm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sim_lib.sh"
sim_setup

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	t_skip "speedscope view" "no chromium at $CHROMIUM (scripts/install-deps)"
	t_done; exit 0
fi
if ! command -v npm >/dev/null; then
	t_skip "speedscope view" "no npm (scripts/install-deps)"
	t_done; exit 0
fi
cache=$BUILD/export-view
app=$cache/node_modules/speedscope/dist/release
if [ ! -f "$app/index.html" ]; then
	mkdir -p "$cache"
	if ! timeout 300 npm install --prefix "$cache" --no-audit --no-fund --silent \
		speedscope >"$cache/npm.log" 2>&1 || [ ! -f "$app/index.html" ]; then
		t_skip "speedscope view" "npm install speedscope failed: $(tail -1 "$cache/npm.log")"
		t_done; exit 0
	fi
fi
echo "# speedscope $(jq -r .version "$cache/node_modules/speedscope/package.json")"

b=$TESTTMP/xview
rm -rf "$b"
"$SIM" scenario -o "$b" --threads 2 --iters 40 >/dev/null 2>&1
"$SIM" synth "$b" --cpus 2 --jit-invoke 5 --seed 4 >/dev/null 2>&1
"$JPBPF" decode -q "$b" >/dev/null 2>&1
root=$TESTTMP/xview-root
mkdir -p "$root/profiles"
ln -sfn "$app" "$root/speedscope"
"$JPBPF" report "$b" --format folded -o "$root/profiles/stacks.folded" 2>"$b.err"
t_check "folded export written" test -s "$root/profiles/stacks.folded"
"$JPBPF" report "$b" --format perfetto -o "$root/profiles/trace.json" 2>>"$b.err"
t_check "Chrome trace export written" test -s "$root/profiles/trace.json"
printf 'decoy.Main.run;decoy.Other.work 5\n' >"$root/profiles/decoy.folded"

# A local static server for the app and the profiles (same origin).
(cd "$root" && exec python3 -m http.server 0 --bind 127.0.0.1) >"$TESTTMP/xview-http.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
port=""
for _ in $(seq 50); do
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TESTTMP/xview-http.log" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
if [ -z "$port" ]; then
	t_fail "local HTTP server started"
	t_done
	exit 0
fi

# view FILE TITLE: the page's visible text after loading FILE, one
# element's text a line.
view() {
	local url="http://127.0.0.1:$port/speedscope/index.html#profileURL=http%3A%2F%2F127.0.0.1%3A$port%2Fprofiles%2F$1&title=$2&view=sandwich"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$TESTTMP/xview-ud-$2" \
		--virtual-time-budget=15000 --dump-dom "$url" 2>"$TESTTMP/xview-$2.err" |
		python3 -c 'import html, re, sys
t = re.sub(r"<[^>]+>", "\n", sys.stdin.read())
print("\n".join(s.strip() for s in html.unescape(t).splitlines() if s.strip()))'
}

# has_all NAMES_FILE TEXT_FILE: some names, every one a line of the page.
has_all() {
	[ -s "$1" ] || return 1
	local missing
	missing=$(grep -vxF -f "$2" "$1" | head -3)
	[ -z "$missing" ] || { echo "# missing in the page: $missing"; return 1; }
}

view stacks.folded folded >"$TESTTMP/xview-folded.txt"
tr ';' '\n' <"$root/profiles/stacks.folded" | sed 's/ [0-9]*$//' | sort -u >"$TESTTMP/xview-folded.names"
t_check "folded: speedscope shows its title and the symbol table" \
	sh -c "grep -qx 'folded' '$TESTTMP/xview-folded.txt' && grep -qx 'Symbol Name' '$TESTTMP/xview-folded.txt'"
t_check "folded: every frame name ($(wc -l <"$TESTTMP/xview-folded.names")) is on the page" \
	has_all "$TESTTMP/xview-folded.names" "$TESTTMP/xview-folded.txt"
t_check "folded: no import error" sh -c "! grep -q 'Something went wrong' '$TESTTMP/xview-folded.txt'"

view trace.json trace >"$TESTTMP/xview-trace.txt"
# speedscope opens on the first thread's timeline: its method names
jq -r '(.traceEvents | map(select(.ph == "B")) | .[0].tid) as $t |
	.traceEvents[] | select(.ph == "B" and .tid == $t) | .name' \
	"$root/profiles/trace.json" | sort -u >"$TESTTMP/xview-trace.names"
t_check "Chrome trace: the symbol table, one profile per thread (1/2)" \
	sh -c "grep -qx 'Symbol Name' '$TESTTMP/xview-trace.txt' && grep -qx '(1/2)' '$TESTTMP/xview-trace.txt'"
t_check "Chrome trace: every method name of the first thread ($(wc -l <"$TESTTMP/xview-trace.names")) is on the page" \
	has_all "$TESTTMP/xview-trace.names" "$TESTTMP/xview-trace.txt"
t_check "Chrome trace: no import error" sh -c "! grep -q 'Something went wrong' '$TESTTMP/xview-trace.txt'"

view decoy.folded decoy >"$TESTTMP/xview-decoy.txt"
t_check "negative control: a decoy profile shows its own frames" \
	grep -qx 'decoy.Other.work' "$TESTTMP/xview-decoy.txt"
if has_all "$TESTTMP/xview-folded.names" "$TESTTMP/xview-decoy.txt" >/dev/null; then
	t_fail "negative control: the name check fails on the decoy"
else
	t_ok "negative control: the name check fails on the decoy"
fi
t_done
