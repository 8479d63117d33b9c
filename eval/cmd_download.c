// cmd_download.c: `xsa-eval download` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_download(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval download: not implemented yet in this build\n");
    return 2;
}
