// cmd_tokenize.c: `xsa-eval tokenize` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_tokenize(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval tokenize: not implemented yet in this build\n");
    return 2;
}
