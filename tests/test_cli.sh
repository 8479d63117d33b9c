#!/usr/bin/env bash
# Command-line basics: help, version, unknown commands.
. "$(dirname "$0")/lib.sh"
expect_exit help 0 "usage: xsa-eval" -- "$XSA_BIN" --help
expect_exit version 0 "^xsa-eval [0-9]" -- "$XSA_BIN" --version
expect_exit unknown_command 2 "unknown command 'frobnicate'" -- "$XSA_BIN" frobnicate
expect_exit no_args 2 "usage" -- "$XSA_BIN"
finish
