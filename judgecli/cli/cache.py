"""`judge cache stats | clear`: the reply cache."""

from __future__ import annotations

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stdout
from judgecli.errors import ExitCode

cache_app = typer.Typer(help="Inspect or clear the reply cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("stats")
@exits_with_code
def stats_command() -> ExitCode:
    """Where the cache is, how many replies it holds, per model."""
    from judgecli.config import cache_dir
    from judgecli.store.cache import ReplyCache

    cache = ReplyCache(cache_dir())
    stats = cache.stats()
    cache.close()
    # soft_wrap: a long cache path stays one line a script can read.
    stdout.print(
        f"{escape(str(stats.path))}: {stats.entries} replies, {stats.size_bytes / 1e6:.1f} MB",
        soft_wrap=True,
    )
    for model, count in sorted(stats.models.items()):
        stdout.print(f"  {escape(model)}: {count}", soft_wrap=True)
    return ExitCode.OK


@cache_app.command("clear")
@exits_with_code
def clear_command() -> ExitCode:
    """Delete every cached reply (the next runs pay for their calls again)."""
    from judgecli.config import cache_dir
    from judgecli.store.cache import ReplyCache

    cache = ReplyCache(cache_dir())
    removed = cache.clear()
    cache.close()
    stdout.print(f"removed {removed} cached replies from {escape(str(cache.path))}", soft_wrap=True)
    return ExitCode.OK
