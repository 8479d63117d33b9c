// cmd_tasks.c: `xsa-eval tasks` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_tasks(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval tasks: not implemented yet in this build\n");
    return 2;
}
