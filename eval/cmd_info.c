// cmd_info.c: `xsa-eval info` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_info(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval info: not implemented yet in this build\n");
    return 2;
}
