"""``bayesgen demo``: its options; the demo itself is :mod:`bayesgen.demo`."""

from __future__ import annotations

import argparse
from textwrap import dedent

from bayesgen.cli.arguments import HelpFormatter, non_negative_int, positive_float, positive_int


def add_demo_command(commands) -> None:
    """``demo`` among ``commands`` (the parser's subparsers)."""
    demo = commands.add_parser(
        "demo",
        help="run every model on bundled data: comparisons, reports and saved models",
        formatter_class=HelpFormatter,
        description=dedent(
            """\
            Print the closed forms of the lecture example, then fit every model:

              digits counts      multinomial
              binarized digits   bernoulli
              binned digits      categorical
              wine               gda and qda
              a text corpus      multinomial and bernoulli (bundled, or --dataset sms-spam)

            print each comparison verdict, and write reports under reports/ and models
            under models/."""
        ),
    )
    demo.add_argument(
        "--dataset",
        choices=["builtin", "sms-spam"],
        default="builtin",
        help="text corpus for the text models: the bundled one or the SMS Spam Collection",
    )
    demo.add_argument("--data-path", help="local SMS Spam Collection file (label<TAB>text)")
    demo.add_argument(
        "--download",
        action="store_true",
        help="download the SMS Spam Collection when no --data-path is given",
    )
    demo.add_argument(
        "--inference",
        choices=["nuts", "conjugate"],
        default="nuts",
        help="NUTS in PyMC, or exact draws from the conjugate posteriors (much faster)",
    )
    demo.add_argument("--draws", type=positive_int, default=1000, help="posterior draws per chain")
    demo.add_argument(
        "--tune", type=non_negative_int, default=500, help="NUTS tuning steps per chain"
    )
    demo.add_argument("--seed", type=non_negative_int, default=0, help="random seed")
    demo.add_argument("--alpha", type=positive_float, default=1.0, help="smoothing λ")
    demo.add_argument("--models-dir", default="models", help="folder of the saved models")
    demo.add_argument("--reports-dir", default="reports", help="folder of the HTML reports")
    demo.add_argument("--no-reports", action="store_true", help="skip the HTML reports")
    demo.add_argument("--no-map", action="store_true", help="skip the MAP optimisations")
    demo.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="models fitted and reported at a time, each in its own process (default: 1 "
        "with NUTS, whose chains already use every core; with --inference conjugate 2 where "
        "2 cores or more are idle, else 1); 1 runs them in this process with PyMC's "
        "progress bars",
    )
    demo.add_argument(
        "--export",
        metavar="DIR",
        help="write the demo's data (messages.csv, new_messages.csv, digits.csv, wine.csv) "
        "into DIR for the command-line examples, print commands that use them, and stop",
    )
    demo.add_argument(
        "--quiet",
        action="store_true",
        help="no progress lines (on standard error) and no progress bars; results still print",
    )
    demo.set_defaults(run=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from bayesgen import demo  # heavy: matplotlib, ArviZ (the demo writes reports)

    if args.workers is None:
        args.workers = demo.default_workers(args.inference)
    return demo.run(args)
