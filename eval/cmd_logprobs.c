// cmd_logprobs.c: `xsa-eval logprobs` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_logprobs(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval logprobs: not implemented yet in this build\n");
    return 2;
}
