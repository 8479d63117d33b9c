// cmd_compare.c: `xsa-eval compare` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_compare(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval compare: not implemented yet in this build\n");
    return 2;
}
