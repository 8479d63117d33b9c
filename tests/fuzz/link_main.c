// link_main.c: a main for linking a libFuzzer harness with gcc against build/libxsa.a, so `make
// test` finds a harness that no longer compiles or links (tests/fuzz/build.sh needs clang and is
// run by hand). It never calls the harness.
int main(void) { return 0; }
