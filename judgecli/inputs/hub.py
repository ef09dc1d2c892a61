"""Hugging Face datasets: `hf://owner/name[/config][@revision][:split]`, streamed with the
`datasets` library (the `judgecli[hf]` extra).

The split is `train` unless named; a dataset with several configs needs one named
(`hf://nyu-mll/glue/sst2:validation`); `@revision` pins a branch, tag or commit. The name is
what `datasets.load_dataset` takes, so it resolves as there: a folder of that name in the
current directory is read instead of the Hub, and HF_TOKEN, HF_HOME and HF_HUB_OFFLINE
apply. Rows are streamed (`streaming=True`): a dataset is never downloaded whole before
the first row is checked. The rows read are kept in a temporary copy (copies.py), so a
run reads the Hub once and judges exactly the rows it checked, even if the dataset
changes meanwhile. A row's values map to the case fields as a Parquet file's do.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgecli.errors import DatasetError
from judgecli.inputs.copies import CopiedSource
from judgecli.inputs.rows import HUB_SCHEME, Format, require
from judgecli.inputs.tables import first_line, read_each, unreadable

DEFAULT_SPLIT = "train"
SYNTAX = re.compile(
    r"^hf://(?P<repo>[\w.-]+(?:/[\w.-]+)?)(?:/(?P<config>[\w.-]+))?"
    r"(?:@(?P<revision>[^:@\s]+))?(?::(?P<split>[\w.-]+))?$"
)
EXAMPLES = "hf://owner/name, hf://owner/name:validation or hf://owner/name/config:test"


@dataclass(frozen=True)
class HubName:
    """A dataset of the Hub as `hf://...` names it."""

    repo: str
    """`owner/name` (or a name without an owner)."""
    config: str | None
    revision: str | None
    split: str

    def __str__(self) -> str:
        config = f"/{self.config}" if self.config else ""
        revision = f"@{self.revision}" if self.revision else ""
        return f"{HUB_SCHEME}{self.repo}{config}{revision}:{self.split}"


def parse_hub_name(text: str) -> HubName:
    """`hf://owner/name[/config][@revision][:split]` read, or a DatasetError (exit 2)."""
    match = SYNTAX.match(text)
    if match is None:
        raise DatasetError(
            text, None, "not a Hugging Face dataset name", hint=f"write e.g. {EXAMPLES}"
        )
    return HubName(
        repo=match["repo"],
        config=match["config"],
        revision=match["revision"],
        split=match["split"] or DEFAULT_SPLIT,
    )


class HubSource(CopiedSource):
    """A split of a Hugging Face dataset, streamed once and kept (module docstring)."""

    format = Format.HUB

    def __init__(self, text: str) -> None:
        self.hub = parse_hub_name(text)
        # Always kept: a second pass would stream the Hub again (module docstring).
        super().__init__(Path(text), str(self.hub), seekable=True)
        self._datasets = require(
            "datasets", package="the datasets library", extra="hf", reading=self.name
        )

    def error(self, number: int | None, problem: str, *, hint: str | None = None) -> DatasetError:
        """A DatasetError naming the dataset, its split and the row (`hf://o/n:train row
        17: ...`).
        """
        where = self.name if number is None else f"{self.name} row {number}"
        return DatasetError(where, None, problem, hint=hint)

    def same_as(self, other: object) -> bool:  # noqa: D102
        return isinstance(other, HubSource) and other.hub == self.hub

    def read_rows(self) -> Iterator[tuple[int, dict[str, Any]]]:  # noqa: D102
        datasets = self._datasets
        # Its progress bars and log lines would come between judge's own lines on stderr;
        # what it logs as an error is raised too, and said once, as judge's error.
        datasets.utils.logging.set_verbosity(logging.CRITICAL)
        datasets.disable_progress_bars()
        # The library raises errors of many kinds (its own, the Hub client's, OSError,
        # ValueError, pyarrow's) and no base of its own: every one is about this dataset.
        try:
            stream = datasets.load_dataset(
                self.hub.repo,
                name=self.hub.config,
                split=self.hub.split,
                revision=self.hub.revision,
                streaming=True,
            )
            rows = iter(stream)
        except Exception as err:
            raise self.load_error(err) from None
        number = 0

        def failed(err: BaseException) -> DatasetError:
            return self.error(
                None,
                unreadable(number, err),
                hint="check the dataset's files, or try again (the network)",
            )

        for fields in read_each(rows, broken=Exception, failed=failed):
            number += 1
            yield number, dict(fields)

    def load_error(self, err: Exception) -> DatasetError:
        """What `load_dataset` said, in plain words, with the fix."""
        message = str(err)
        names = re.search(r"\[([^\]]*)\]", message)
        listed = names.group(1).replace("'", "") if names else "?"
        hub = self.hub
        if message.startswith("Bad split"):
            other = f"{HUB_SCHEME}{hub.repo}{'/' + hub.config if hub.config else ''}"
            first = listed.split(",")[0].strip()
            return self.error(
                None,
                f"no split {hub.split!r} (its splits: {listed})",
                hint=f"name one after a colon, e.g. {other}:{first}",
            )
        if message.startswith("Config name is missing") or "BuilderConfig" in message:
            first = listed.split(",")[0].strip()
            said = f"no config {hub.config!r}" if hub.config else "it has several configs"
            return self.error(
                None,
                f"{said} (its configs: {listed})",
                hint=f"name one after the dataset, e.g. {HUB_SCHEME}{hub.repo}/{first}:{hub.split}",
            )
        if isinstance(err, ConnectionError) or "OfflineModeIsEnabled" in message:
            if any(os.environ.get(v) for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")):
                return self.error(
                    None,
                    "not in the cache, and HF_HUB_OFFLINE keeps the Hub from being asked",
                    hint="unset HF_HUB_OFFLINE to download it (a folder of that name here is "
                    "read instead of the Hub)",
                )
            return self.error(
                None,
                f"cannot reach the Hugging Face Hub ({first_line(err)})",
                hint="check the network and the name",
            )
        if type(err).__name__ in ("DatasetNotFoundError", "RepositoryNotFoundError"):
            return self.error(
                None,
                "no such dataset on the Hugging Face Hub, or it is private or gated",
                hint="check the name (hf://owner/name); for a private or gated dataset, log "
                "in (hf auth login) or set HF_TOKEN",
            )
        return self.error(
            None,
            f"cannot load it ({first_line(err)})",
            hint=f"check the name: {EXAMPLES}",
        )
