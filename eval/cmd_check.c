// cmd_check.c: `xsa-eval check` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_check(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval check: not implemented yet in this build\n");
    return 2;
}
