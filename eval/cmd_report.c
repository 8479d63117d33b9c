// cmd_report.c: `xsa-eval report` (placeholder until its issue lands).
#include <stdio.h>

#include "eval/commands.h"

int cmd_report(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "xsa-eval report: not implemented yet in this build\n");
    return 2;
}
