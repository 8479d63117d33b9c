// commands.h: one function per subcommand, each in cli/cmd_<name>.c. Each parses its own
// flags (argv[0] is the subcommand name) and returns the process exit code
// (0 ok, 1 regression found by check, 2 bad usage or input, 3 runtime failure).
#ifndef XSA_CLI_COMMANDS_H
#define XSA_CLI_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_download(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_logprobs(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_ppl(int argc, char **argv);
int cmd_probe(int argc, char **argv);

#endif
