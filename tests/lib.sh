# lib.sh: helpers for shell tests of the command line. Source it, call expect_* and finish.
# Each expect_* is one test case; finish prints "N passed, N failed, N skipped".
XSA_BIN=${XSA_BIN:-./xsa-eval}
# The tests' grep/sed ranges ([a-z], [A-Z_0-9]) and sort orders mean bytes: under some locales
# (tr_TR: i and I sort apart from a-z) they would not, and documented flags or error names
# would seem missing. (Python keeps reading and writing UTF-8 under C: PEP 540's UTF-8 mode.)
export LC_ALL=C
# A private CA the machine names for Python's requests would change which test certificates verify.
unset REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE
_p=0 _f=0 _s=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# expect_exit NAME CODE PATTERN -- CMD...: runs CMD, requires exit CODE and stderr+stdout
# matching the extended regex PATTERN (empty pattern: anything).
expect_exit() {
    local name=$1 code=$2 pat=$3; shift 4
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -ne "$code" ]; then
        echo "FAIL $name: exit $rc, wanted $code"; echo "$out" | head -5 | sed 's/^/    /'; _f=$((_f + 1)); return
    fi
    if [ -n "$pat" ] && ! echo "$out" | grep -qE -- "$pat"; then
        echo "FAIL $name: output does not match /$pat/"; echo "$out" | head -5 | sed 's/^/    /'; _f=$((_f + 1)); return
    fi
    echo "ok   $name"; _p=$((_p + 1))
}

# expect_one_line NAME CODE PATTERN -- CMD...: expect_exit, and the output is a single line.
expect_one_line() {
    local name=$1; shift
    expect_exit "$name" "$@"
    shift 3
    local n
    n=$("$@" 2>&1 | wc -l)
    [ "$n" -eq 1 ] && pass "$name.one_line" || fail "$name.one_line" "$n lines of output"
}

# json_with SRC DST KEY [VALUE]: the one-key-per-line JSON object SRC (an xsa_eval.json) written
# to DST with KEY set to VALUE (JSON text), or left out without one.
json_with() {
    local src=$1 dst=$2 key=$3
    { grep '^ "' "$src" | grep -v "^ \"$key\":" | sed 's/,$//'; [ $# -gt 3 ] && echo " \"$key\": $4"; } |
        { echo "{"; paste -sd, -; echo "}"; } > "$dst"
}

skip() { echo "skip $1: $2"; _s=$((_s + 1)); }
pass() { echo "ok   $1"; _p=$((_p + 1)); }
fail() { echo "FAIL $1: $2"; _f=$((_f + 1)); }

finish() { echo "$_p passed, $_f failed, $_s skipped"; [ "$_f" -eq 0 ]; }
