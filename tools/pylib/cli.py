"""--help for the tools' scripts: a script that writes committed fixtures must never run its job
when asked for help (tools/README.md lists them)."""
import sys


def help_flag(doc):
    """Prints the script's docstring and exits 0 on -h or --help; the other arguments are the
    script's own."""
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(doc.strip())
        sys.exit(0)


def no_args(doc):
    """help_flag, and exit 2 for any argument: the script takes none."""
    help_flag(doc)
    if len(sys.argv) > 1:
        print("%s: takes no arguments (got %s); see --help" % (sys.argv[0], " ".join(sys.argv[1:])), file=sys.stderr)
        sys.exit(2)
