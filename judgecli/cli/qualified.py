"""`--require-qualified RECORD` (score, pairwise, gate): the option, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgecli.cli.options import GATE

RequireQualifiedOpt = Annotated[
    Path | None,
    typer.Option(
        "--require-qualified",
        metavar="RECORD",
        rich_help_panel=GATE,
        help="Refuse (exit 2, before any call) unless the judge and rubric are those a "
        "`judge qualify` record (qualification.json) qualified, at or above its floor.",
        show_default=False,
    ),
]
