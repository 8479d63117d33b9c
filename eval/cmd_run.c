// cmd_run.c: `xsa-eval run` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_run(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval run: not implemented yet in this build\n");
    return 2;
}
