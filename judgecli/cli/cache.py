"""`judge cache stats | clear | export | import`: the reply cache."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from judgecli.cli.app import app, exits_with_code, stderr, stdout
from judgecli.errors import ExitCode

if TYPE_CHECKING:  # the store (pydantic, sqlite) is imported by the commands that use it
    from judgecli.store.cache import CachedReply

cache_app = typer.Typer(
    help="Inspect, clear, export or import the reply cache.", no_args_is_help=True
)
app.add_typer(cache_app, name="cache")

STDIO = "-"


@cache_app.command("stats")
@exits_with_code
def stats_command() -> ExitCode:
    """Where the cache is, how many replies it holds, per model."""
    from judgecli.settings.config import cache_dir
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
    """Delete every cached reply (the next runs pay for their calls again). A damaged cache
    file is removed whole, and an empty cache made in its place.
    """
    from judgecli.settings.config import cache_dir
    from judgecli.store.cache import clear_cache

    cleared = clear_cache(cache_dir())
    path = escape(str(cleared.path))
    if cleared.entries is not None:
        stdout.print(f"removed {cleared.entries} cached replies from {path}", soft_wrap=True)
    else:
        stdout.print(
            f"removed the damaged reply cache {path} ({escape(cleared.damage or '')}; "
            f"{cleared.size_bytes:,} bytes, its replies unreadable) and started an empty one",
            soft_wrap=True,
        )
    return ExitCode.OK


@cache_app.command("export")
@exits_with_code
def export_command(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="JSON Lines to write (gzipped when it ends in .gz); - for stdout.",
            show_default=False,
        ),
    ],
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            metavar="M",
            help="Repeatable: export only the replies of this judge model.",
            show_default=False,
        ),
    ] = None,
) -> ExitCode:
    """Write the cached replies to FILE, one JSON object a line, to carry the cache to
    another machine (`judge cache import FILE` there). Replies are keyed by everything
    that decides a call, the --api-base included: they answer the same requests sent to
    the same endpoint.
    """
    from judgecli.settings.config import cache_dir
    from judgecli.store.cache import ReplyCache
    from judgecli.store.cache_transfer import export_entries, write_entries

    cache = ReplyCache(cache_dir())
    try:
        entries = cache.entries(models or ())
        if file == STDIO:
            count = write_entries(entries, sys.stdout.write)
            # stdout carries the replies: the count goes to stderr.
            stderr.print(f"exported {count} replies to stdout")
        else:
            count = export_entries(entries, Path(file))
            stdout.print(f"exported {count} replies to {escape(file)}", soft_wrap=True)
    finally:
        cache.close()
    return ExitCode.OK


@cache_app.command("import")
@exits_with_code
def import_command(
    files: Annotated[
        list[str],
        typer.Argument(
            metavar="FILE...",
            help="Files `judge cache export` wrote (.gz read gzipped); - for stdin.",
            show_default=False,
        ),
    ],
) -> ExitCode:
    """Merge exported replies into this machine's cache. A reply already cached is kept
    (first writer wins). All or nothing: a bad line in any FILE exits 2 naming FILE:LINE,
    and nothing is imported.
    """
    from judgecli.settings.config import cache_dir
    from judgecli.store.cache import ReplyCache

    cache = ReplyCache(cache_dir())
    try:
        counts = cache.merge_all(read_files(files))
    finally:
        cache.close()
    for name, count in zip(files, counts, strict=True):
        stdout.print(
            f"imported {count.added} new replies ({count.already} already cached) "
            f"from {escape(label(name))}",
            soft_wrap=True,
        )
    return ExitCode.OK


def label(name: str) -> str:
    """How a FILE argument is named in messages (`-` is stdin)."""
    return "stdin" if name == STDIO else name


def read_files(files: list[str]) -> Iterator[Iterator[CachedReply]]:
    """The entries of each file in turn, each read while its file is open."""
    from judgecli.store.cache_transfer import open_export, read_entries

    for name in files:
        if name == STDIO:
            yield read_entries(sys.stdin.buffer, label(name))
        else:
            with open_export(Path(name)) as handle:
                yield read_entries(handle, name)
