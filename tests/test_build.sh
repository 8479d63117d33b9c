#!/usr/bin/env bash
# The build's setup: tools/install-deps.sh (one package list for `make` and .ci/run; as a user
# it prints the one sudo line and stops), a user's CFLAGS adding to the build's own flags, and
# the CUDA backend built one object per .cu file.
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh

expect_exit deps_all_installed 0 "" -- bash tools/install-deps.sh --check
printf '# a comment\nlibcjson-dev\n  xsa-no-such-package  \n' > "$TMP/list"
chmod a+rx "$TMP" && chmod a+r "$TMP/list"  # readable by the unprivileged user below
expect_exit deps_check_names_missing 1 "missing Debian packages: xsa-no-such-package$" -- \
    env XSA_DEPS_LIST="$TMP/list" bash tools/install-deps.sh --check
# As a user: the one line to run, naming only what is missing, and exit 1 without apt-get.
if [ "$(id -u)" -ne 0 ]; then
    expect_exit deps_user_gets_sudo_line 1 "sudo apt-get install -y --no-install-recommends xsa-no-such-package$" -- \
        env XSA_DEPS_LIST="$TMP/list" bash tools/install-deps.sh
elif command -v setpriv >/dev/null; then
    expect_exit deps_user_gets_sudo_line 1 "sudo apt-get install -y --no-install-recommends xsa-no-such-package$" -- \
        env XSA_DEPS_LIST="$TMP/list" setpriv --reuid=65534 --regid=65534 --clear-groups bash tools/install-deps.sh
else
    skip deps_user_gets_sudo_line "root without setpriv: cannot run as a user"
fi
expect_exit deps_unreadable_list 2 "cannot read $TMP/nope" -- env XSA_DEPS_LIST="$TMP/nope" bash tools/install-deps.sh --check
# .ci/run installs through the same script and names no package of its own.
if grep -q "bash tools/install-deps.sh" .ci/run && ! grep -q "apt-get install" .ci/run; then pass ci_uses_one_list
else fail ci_uses_one_list ".ci/run does not install through tools/install-deps.sh"; fi

# make CFLAGS=-O3: the user's flags come after the build's, which stay (-I., -std=c11, -Werror).
cmd=$(make -n BUILD="$TMP/b" CFLAGS=-O3 "$TMP/b/common/vec.o" 2>&1)
case $cmd in
*"-std=c11"*"-Werror"*"-I. "*"-O3"*) pass user_cflags_add ;;
*) fail user_cflags_add "$(echo "$cmd" | tail -1)" ;;
esac
cmd=$(make -n -B BUILD="$TMP/b" LDFLAGS=-Wl,-O1 LDLIBS=-lrt xsa-eval 2>&1 | grep -- "-o xsa-eval ")
case $cmd in
*"-Wl,-O1"*"-lcjson"*"-lrt"*) pass user_ldflags_add ;;
*) fail user_ldflags_add "$cmd" ;;
esac

# CUDA: one nvcc -c per .cu file, then one link.
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    cmd=$(make -n BUILD="$TMP/b" "$TMP/b/libxsa_cuda.so" 2>&1)
    n_cu=$(ls kernels/cuda/*.cu | wc -l)
    n_c=$(echo "$cmd" | grep -c -- " -c -o $TMP/b/kernels/cuda/")
    n_link=$(echo "$cmd" | grep -c -- "-shared -o $TMP/b/libxsa_cuda.so")
    if [ "$n_c" -eq "$n_cu" ] && [ "$n_link" -eq 1 ]; then pass cuda_one_object_per_file
    else fail cuda_one_object_per_file "$n_c compiles for $n_cu .cu files, $n_link links"; fi
else
    skip cuda_one_object_per_file "no nvcc"
fi
finish
